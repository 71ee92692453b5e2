package metadata

import (
	"go.opentelemetry.io/otel/metric"

	"go.opentelemetry.io/collector/component"
)

// Telemetry metric names (metadata.yaml, telemetry.metrics, with the collector's otelcol_ prefix).
const (
	MetricDatabasesDiscarded = "otelcol_extension_safe_file_storage_databases_discarded"
)

// TelemetryBuilder holds the extension's internal telemetry instruments.
type TelemetryBuilder struct {
	// DatabasesDiscarded counts damaged database files moved aside at start, by damage.
	DatabasesDiscarded metric.Int64Counter
}

// NewTelemetryBuilder creates the instruments on the component's MeterProvider.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	m := settings.MeterProvider.Meter(ScopeName)
	var b TelemetryBuilder
	var err error
	b.DatabasesDiscarded, err = m.Int64Counter(MetricDatabasesDiscarded,
		metric.WithDescription("Damaged storage database files moved aside at start; what each held is lost. [Alpha]"),
		metric.WithUnit("{file}"))
	return &b, err
}

package metadata

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"go.opentelemetry.io/collector/component"
)

// Telemetry metric names (metadata.yaml, telemetry.metrics, with the collector's otelcol_ prefix).
const (
	MetricRecords       = "otelcol_processor_oom_classifier_records"
	MetricOOMs          = "otelcol_processor_oom_classifier_ooms"
	MetricXidLines      = "otelcol_processor_oom_classifier_xid_lines"
	MetricWindowDropped = "otelcol_processor_oom_classifier_window_dropped"
	MetricForwardErrors = "otelcol_processor_oom_classifier_forward_errors"
	MetricHeld          = "otelcol_processor_oom_classifier_held"
	MetricReleased      = "otelcol_processor_oom_classifier_released"
)

// Meter returns the processor's meter.
func Meter(settings component.TelemetrySettings) metric.Meter {
	return settings.MeterProvider.Meter(ScopeName)
}

// TelemetryBuilder holds the processor's internal telemetry instruments.
type TelemetryBuilder struct {
	// Records counts log records the logs side has seen.
	Records metric.Int64Counter
	// OOMs counts OOM records recognised, by gpu.oom.framework and gpu.oom.cause.
	OOMs metric.Int64Counter
	// XidLines counts kernel Xid lines recognised in plain log records.
	XidLines metric.Int64Counter
	// WindowDropped counts what the window's caps pushed out, by reason.
	WindowDropped metric.Int64Counter
	// ForwardErrors counts held log batches the next consumer refused after release.
	ForwardErrors metric.Int64Counter
	// Held counts log records held for their host's metrics instead of going on in the call.
	Held metric.Int64Counter
	// Released counts held log records forwarded, by reason.
	Released metric.Int64Counter
}

// NewTelemetryBuilder creates the instruments on the component's MeterProvider.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	m := Meter(settings)
	var b TelemetryBuilder
	var err, errs error
	b.Records, err = m.Int64Counter(MetricRecords,
		metric.WithDescription("Log records seen by the oom_classifier processor. [Alpha]"),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	b.OOMs, err = m.Int64Counter(MetricOOMs,
		metric.WithDescription("GPU out-of-memory records recognised, by framework and cause. [Alpha]"),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	b.XidLines, err = m.Int64Counter(MetricXidLines,
		metric.WithDescription("Kernel Xid lines recognised in plain log records. [Alpha]"),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	b.WindowDropped, err = m.Int64Counter(MetricWindowDropped,
		metric.WithDescription("GPUs, samples, processes and Xids the metric window's caps evicted, by reason. [Alpha]"),
		metric.WithUnit("{item}"))
	errs = errors.Join(errs, err)
	b.ForwardErrors, err = m.Int64Counter(MetricForwardErrors,
		metric.WithDescription("Held log batches the next consumer returned an error for. [Alpha]"),
		metric.WithUnit("{batch}"))
	errs = errors.Join(errs, err)
	b.Held, err = m.Int64Counter(MetricHeld,
		metric.WithDescription("Log records held until their host's metrics cover their OOMs, instead of going on in the call. [Alpha]"),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	b.Released, err = m.Int64Counter(MetricReleased,
		metric.WithDescription("Held log records forwarded, by reason (covered, decision_wait, queue_full, shutdown). [Alpha]"),
		metric.WithUnit("{record}"))
	errs = errors.Join(errs, err)
	return &b, errs
}

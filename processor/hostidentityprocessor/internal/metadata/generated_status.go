// Package metadata holds the processor's type and stability, in the shape mdatagen generates
// from metadata.yaml (written by hand here; metadata_test.go keeps them in step).
package metadata // import "github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the processor's component type.
	Type = component.MustNewType("host_identity")
	// ScopeName is the instrumentation scope of the processor.
	ScopeName = "github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor"
)

const (
	TracesStability  = component.StabilityLevelAlpha
	MetricsStability = component.StabilityLevelAlpha
	LogsStability    = component.StabilityLevelAlpha
)

// The resource attributes the processor sets (metadata.yaml: resource_attributes).
const (
	AttributeHostName = "host.name"
	AttributeHostID   = "host.id"
)

// Package metadata holds the processor's type, stability and internal telemetry, in the shape
// mdatagen generates from metadata.yaml (written by hand here; a test keeps them in step).
package metadata

import "go.opentelemetry.io/collector/component"

var (
	// Type is the processor's component type.
	Type = component.MustNewType("oom_classifier")
	// ScopeName is the instrumentation scope of the processor's own telemetry.
	ScopeName = "github.com/gpumem/otelcol-gpumem/processor/oomclassifier"
)

const (
	LogsStability    = component.StabilityLevelAlpha
	MetricsStability = component.StabilityLevelAlpha
)

// Package metadata holds the gpu_mem receiver's contract in code: its type, its metrics and
// resource attributes with their switches, and the builder that turns readings into pdata.
// It takes the shape mdatagen generates; mdatagen is not available here, so it is written by
// hand and kept in step with ../../metadata.yaml by TestMetadataInStep.
package metadata // import "github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("gpu_mem")
	ScopeName = "github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver"
)

const (
	MetricsStability = component.StabilityLevelAlpha
	LogsStability    = component.StabilityLevelAlpha
)

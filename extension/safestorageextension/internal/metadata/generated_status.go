// Package metadata holds the extension's type, stability and telemetry, in the shape mdatagen
// generates from metadata.yaml (written by hand here; metadata_test.go keeps them in step).
package metadata // import "github.com/gpumem/otelcol-gpumem/extension/safestorageextension/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the extension's component type.
	Type = component.MustNewType("safe_file_storage")
	// ScopeName is the instrumentation scope of the extension.
	ScopeName = "github.com/gpumem/otelcol-gpumem/extension/safestorageextension"
)

const (
	ExtensionStability = component.StabilityLevelAlpha
)

// Package metadata holds the extension's type and stability, in the shape mdatagen generates
// from metadata.yaml (written by hand here; metadata_test.go keeps them in step).
package metadata // import "github.com/gpumem/otelcol-gpumem/extension/preauthextension/internal/metadata"

import "go.opentelemetry.io/collector/component"

var (
	// Type is the extension's component type.
	Type = component.MustNewType("preauth")
	// ScopeName is the instrumentation scope of the extension.
	ScopeName = "github.com/gpumem/otelcol-gpumem/extension/preauthextension"
)

const (
	ExtensionStability = component.StabilityLevelAlpha
)

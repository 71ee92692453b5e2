package authretryextension

import (
	"testing"

	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/gpumem/otelcol-gpumem/extension/authretryextension/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/internal/metadatacheck"
)

func extensiontestSettings() extension.Settings { return extensiontest.NewNopSettings(metadata.Type) }

// TestMetadataMatchesCode keeps metadata.yaml, README.md's status table and the code in step.
func TestMetadataMatchesCode(t *testing.T) {
	metadatacheck.Extension(t, metadata.Type, metadata.ExtensionStability)
}

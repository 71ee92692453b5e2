package safestorageextension

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/extension/safestorageextension/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/internal/metadatacheck"
)

func extensiontestSettings() extension.Settings { return extensiontest.NewNopSettings(metadata.Type) }

// TestMetadataMatchesCode keeps metadata.yaml, README.md's status table, documentation.md and
// the code in step.
func TestMetadataMatchesCode(t *testing.T) {
	metadatacheck.Extension(t, metadata.Type, metadata.ExtensionStability)

	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Telemetry struct {
			Metrics map[string]struct {
				Description string   `yaml:"description"`
				Unit        string   `yaml:"unit"`
				Attributes  []string `yaml:"attributes"`
			} `yaml:"metrics"`
		} `yaml:"telemetry"`
		Attributes map[string]struct {
			Enum []string `yaml:"enum"`
		} `yaml:"attributes"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	require.Len(t, md.Telemetry.Metrics, 1)
	m, ok := md.Telemetry.Metrics[metadata.MetricDatabasesDiscarded[len("otelcol_"):]]
	require.True(t, ok, "metadata.yaml names %s", metadata.MetricDatabasesDiscarded)
	assert.Equal(t, []string{"damage"}, m.Attributes)
	assert.Equal(t, []string{"empty", "corrupt"}, md.Attributes["damage"].Enum)

	doc, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	var docMetrics []string
	for _, h := range regexp.MustCompile(`(?m)^### (\S+)$`).FindAllStringSubmatch(string(doc), -1) {
		docMetrics = append(docMetrics, h[1])
	}
	assert.Equal(t, []string{metadata.MetricDatabasesDiscarded}, docMetrics)
	assert.Contains(t, string(doc), m.Description)
	assert.Contains(t, string(doc), "| "+m.Unit+" |")
}

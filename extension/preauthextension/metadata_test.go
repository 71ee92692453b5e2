package preauthextension

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/extension/preauthextension/internal/metadata"
)

func extensiontestSettings() extension.Settings { return extensiontest.NewNopSettings(metadata.Type) }

// TestMetadataMatchesCode keeps metadata.yaml, README.md's status table and the code in step.
func TestMetadataMatchesCode(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Type   string `yaml:"type"`
		Status struct {
			Class     string              `yaml:"class"`
			Stability map[string][]string `yaml:"stability"`
		} `yaml:"status"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	assert.Equal(t, metadata.Type.String(), md.Type)
	assert.Equal(t, "extension", md.Status.Class)
	level := strings.ToLower(metadata.ExtensionStability.String())
	assert.Equal(t, map[string][]string{level: {"extension"}}, md.Status.Stability)

	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "| Stability | "+level+" |")
	assert.Contains(t, string(readme), "  "+metadata.Type.String()+":\n", "README's example uses the type")
}

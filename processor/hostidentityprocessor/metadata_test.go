package hostidentityprocessor

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor/internal/metadata"
)

type metadataFile struct {
	Type   string `yaml:"type"`
	Status struct {
		Class     string              `yaml:"class"`
		Stability map[string][]string `yaml:"stability"`
	} `yaml:"status"`
	ResourceAttributes map[string]struct {
		Type    string `yaml:"type"`
		Enabled bool   `yaml:"enabled"`
	} `yaml:"resource_attributes"`
}

// TestMetadataMatchesCode keeps metadata.yaml, documentation.md and the code in step.
func TestMetadataMatchesCode(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md metadataFile
	require.NoError(t, yaml.Unmarshal(raw, &md))
	assert.Equal(t, metadata.Type.String(), md.Type)
	assert.Equal(t, "processor", md.Status.Class)
	assert.Equal(t, []string{"traces", "metrics", "logs"}, md.Status.Stability[strings.ToLower(metadata.MetricsStability.String())])
	assert.Equal(t, metadata.MetricsStability, metadata.TracesStability)
	assert.Equal(t, metadata.MetricsStability, metadata.LogsStability)

	code := map[string]bool{ // attribute → on by default
		metadata.AttributeHostName: true,
		metadata.AttributeHostID:   createDefaultConfig().(*Config).HostID,
	}
	yamlAttrs := map[string]bool{}
	for k, a := range md.ResourceAttributes {
		assert.Equal(t, "string", a.Type, k)
		yamlAttrs[k] = a.Enabled
	}
	assert.Equal(t, code, yamlAttrs, "metadata.yaml resource_attributes")

	doc, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	docText := string(doc)
	docAttrs := map[string]bool{}
	for _, r := range regexp.MustCompile(`(?m)^\| ([a-z.]+) \| .* \| Any Str \| (true|false) \|$`).FindAllStringSubmatch(docText, -1) {
		docAttrs[r[1]] = r[2] == "true"
	}
	assert.Equal(t, code, docAttrs, "documentation.md resource attributes")
	assert.True(t, strings.HasPrefix(docText, "[comment]"))
	assert.Contains(t, docText, "# "+metadata.Type.String()+"\n")
}

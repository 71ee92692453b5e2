package oomclassifier

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

type metadataFile struct {
	Type   string `yaml:"type"`
	Status struct {
		Class     string              `yaml:"class"`
		Stability map[string][]string `yaml:"stability"`
	} `yaml:"status"`
	Attributes map[string]struct {
		Type string `yaml:"type"`
	} `yaml:"attributes"`
	Telemetry struct {
		Metrics map[string]any `yaml:"metrics"`
	} `yaml:"telemetry"`
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestMetadataMatchesCode keeps metadata.yaml, documentation.md and the code in step.
func TestMetadataMatchesCode(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md metadataFile
	require.NoError(t, yaml.Unmarshal(raw, &md))
	assert.Equal(t, metadata.Type.String(), md.Type)
	assert.Equal(t, "processor", md.Status.Class)
	assert.Equal(t, []string{"logs", "metrics"}, md.Status.Stability["alpha"])

	var yamlAttrs []string
	for k := range md.Attributes {
		yamlAttrs = append(yamlAttrs, k)
	}
	assert.Equal(t, sorted(writtenAttributes), sorted(yamlAttrs), "metadata.yaml attributes")

	doc, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	docText := string(doc)
	rows := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (\\w+) \\|").FindAllStringSubmatch(docText, -1)
	var docAttrs []string
	for _, r := range rows {
		docAttrs = append(docAttrs, r[1])
		assert.Equal(t, md.Attributes[r[1]].Type, r[2], "type of %s", r[1])
	}
	assert.Equal(t, sorted(writtenAttributes), sorted(docAttrs), "documentation.md attributes")

	code := []string{metadata.MetricRecords, metadata.MetricOOMs, metadata.MetricXidLines,
		metadata.MetricWindowDropped, metadata.MetricForwardErrors, metadata.MetricHeld, metadata.MetricReleased}
	var yamlMetrics, docMetrics []string
	for k := range md.Telemetry.Metrics {
		yamlMetrics = append(yamlMetrics, "otelcol_"+k)
	}
	for _, m := range regexp.MustCompile(`(?m)^### (\S+)$`).FindAllStringSubmatch(docText, -1) {
		docMetrics = append(docMetrics, m[1])
	}
	assert.Equal(t, sorted(code), sorted(yamlMetrics), "metadata.yaml telemetry")
	assert.Equal(t, sorted(code), sorted(docMetrics), "documentation.md telemetry")
	assert.True(t, strings.HasPrefix(docText, "[comment]"))
}

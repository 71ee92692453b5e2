package gpumemreceiver

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

type metadataFile struct {
	Type               string `yaml:"type"`
	ResourceAttributes map[string]struct {
		Description string `yaml:"description"`
		Type        string `yaml:"type"`
		Enabled     bool   `yaml:"enabled"`
	} `yaml:"resource_attributes"`
	Attributes map[string]struct {
		Type string   `yaml:"type"`
		Enum []string `yaml:"enum"`
	} `yaml:"attributes"`
	Metrics map[string]struct {
		Description string `yaml:"description"`
		Unit        string `yaml:"unit"`
		Enabled     bool   `yaml:"enabled"`
		Gauge       *struct {
			ValueType string `yaml:"value_type"`
		} `yaml:"gauge"`
		Sum *struct {
			ValueType   string `yaml:"value_type"`
			Monotonic   bool   `yaml:"monotonic"`
			Aggregation string `yaml:"aggregation_temporality"`
		} `yaml:"sum"`
		Attributes []string `yaml:"attributes"`
	} `yaml:"metrics"`
}

func loadMetadata(t *testing.T) metadataFile {
	t.Helper()
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md metadataFile
	require.NoError(t, yaml.Unmarshal(raw, &md))
	return md
}

// TestMetadataInStep keeps metadata.yaml, documentation.md and internal/metadata in step:
// names are a contract, so a change to one without the others fails here.
func TestMetadataInStep(t *testing.T) {
	md := loadMetadata(t)
	assert.Equal(t, metadata.Type.String(), md.Type)

	require.Len(t, md.Metrics, len(metadata.Metrics), "metric count")
	for _, def := range metadata.Metrics {
		y, ok := md.Metrics[def.Name]
		if !assert.True(t, ok, "metric %s missing from metadata.yaml", def.Name) {
			continue
		}
		assert.Equal(t, y.Description, def.Description, def.Name)
		assert.Equal(t, y.Unit, def.Unit, def.Name)
		assert.Equal(t, y.Enabled, def.Enabled, def.Name)
		assert.Equal(t, y.Attributes, def.Attributes, def.Name)
		for _, a := range def.Attributes {
			_, ok := md.Attributes[a]
			assert.True(t, ok, "attribute %s of %s not declared", a, def.Name)
		}
		valueType := map[metadata.ValueType]string{metadata.Int: "int", metadata.Double: "double"}[def.Value]
		switch def.Type {
		case metadata.Gauge:
			if assert.NotNil(t, y.Gauge, "%s is a gauge", def.Name) {
				assert.Equal(t, valueType, y.Gauge.ValueType, def.Name)
			}
		case metadata.Sum:
			if assert.NotNil(t, y.Sum, "%s is a sum", def.Name) {
				assert.Equal(t, valueType, y.Sum.ValueType, def.Name)
				assert.Equal(t, def.Monotonic, y.Sum.Monotonic, def.Name)
				assert.Equal(t, "cumulative", y.Sum.Aggregation, def.Name)
			}
		}
	}

	require.Len(t, md.Attributes, len(metadata.Attributes), "attribute count")
	for _, def := range metadata.Attributes {
		y, ok := md.Attributes[def.Name]
		if assert.True(t, ok, "attribute %s missing from metadata.yaml", def.Name) {
			assert.Equal(t, y.Type, def.Type, def.Name)
			assert.Equal(t, y.Enum, def.Enum, def.Name)
		}
	}

	require.Len(t, md.ResourceAttributes, len(metadata.ResourceAttributes))
	for _, def := range metadata.ResourceAttributes {
		y, ok := md.ResourceAttributes[def.Name]
		if assert.True(t, ok, "resource attribute %s missing from metadata.yaml", def.Name) {
			assert.Equal(t, y.Description, def.Description, def.Name)
			assert.Equal(t, y.Type, def.Type, def.Name)
			assert.Equal(t, y.Enabled, def.Enabled, def.Name)
		}
	}
}

func TestDocumentationInStep(t *testing.T) {
	md := loadMetadata(t)
	raw, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	doc := string(raw)

	var documented []string
	for _, m := range regexp.MustCompile(`(?m)^### (\S+)$`).FindAllStringSubmatch(doc, -1) {
		documented = append(documented, m[1])
	}
	var declared []string
	for name := range md.Metrics {
		declared = append(declared, name)
	}
	sort.Strings(documented)
	sort.Strings(declared)
	assert.Equal(t, declared, documented, "metrics documented vs declared")

	for name, m := range md.Metrics {
		section := regexp.MustCompile(`(?s)### ` + regexp.QuoteMeta(name) + `\n\n(.*?)(\n### |\n## |$)`).FindStringSubmatch(doc)
		if !assert.NotNil(t, section, name) {
			continue
		}
		assert.Contains(t, section[1], m.Description, name)
		kind := "Gauge"
		if m.Sum != nil {
			kind = fmt.Sprintf("Sum | %s | Cumulative | %t", capitalize(m.Sum.ValueType), m.Sum.Monotonic)
		} else {
			kind += " | " + capitalize(m.Gauge.ValueType)
		}
		assert.Contains(t, section[1], "| "+m.Unit+" | "+kind+" |", name)
		for _, a := range m.Attributes {
			assert.Contains(t, section[1], "| "+a+" |", name)
		}
	}
	for name, a := range md.ResourceAttributes {
		assert.Contains(t, doc, fmt.Sprintf("| %s | %s | Any %s | %t |", name, a.Description, capitalize(a.Type), a.Enabled))
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

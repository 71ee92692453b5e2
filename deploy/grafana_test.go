package deploy_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every metric the dashboard queries is one docs/metrics.md documents, under the name
// Prometheus gives it, or the collector's own OOM count; every panel uses the data source
// variable, so the dashboard imports into any Grafana.
func TestDashboardMetricsDocumented(t *testing.T) {
	raw, err := os.ReadFile("grafana/otelcol-gpumem.json")
	require.NoError(t, err)
	doc, err := os.ReadFile("../docs/metrics.md")
	require.NoError(t, err)
	exprs := regexp.MustCompile(`"(?:expr|definition)": "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(raw), -1)
	require.NotEmpty(t, exprs)
	// A metric name is what a selector's brace follows (a recorded series' name has colons).
	names := regexp.MustCompile(`([a-z_:][a-z0-9_:]*)\{`)
	seen := map[string]bool{}
	for _, e := range exprs {
		for _, m := range names.FindAllStringSubmatch(e[1], -1) {
			seen[m[1]] = true
		}
	}
	require.Contains(t, seen, "nvidia_gpu_process_memory_usage_bytes")
	for name := range seen {
		assert.True(t, strings.Contains(string(doc), "`"+name+"`"), "%s: not in docs/metrics.md", name)
	}

	var d struct {
		Panels []struct {
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	for _, p := range d.Panels {
		if p.Type != "row" {
			assert.Equal(t, "${datasource}", p.Datasource.UID, "panel %s", p.Title)
		}
	}
}

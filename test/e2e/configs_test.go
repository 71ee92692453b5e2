//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// renderConfig renders testdata/<name>, a text/template of a collector configuration, with
// data. {{dir}} in a template stands for the collector's own temporary directory, which
// startCollector fills in.
func renderConfig(t *testing.T, name string, data any) string {
	t.Helper()
	tmpl, err := template.New(name).Option("missingkey=error").
		Funcs(template.FuncMap{"dir": func() string { return "{{DIR}}" }}).
		ParseFiles(filepath.Join("testdata", name))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, tmpl.Execute(&out, data), "render %s", name)
	return out.String()
}

// agentConfig is a node agent (testdata/agent.yaml.tmpl) on scenario, stamped host.
func agentConfig(t *testing.T, scenario, host string, port int) string {
	return renderConfig(t, "agent.yaml.tmpl", struct {
		Scenario, Host string
		Port           int
	}{scenario, host, port})
}

// gatewayConfig is the gateway (testdata/gateway.yaml.tmpl) listening on port.
func gatewayConfig(t *testing.T, port int) string {
	return renderConfig(t, "gateway.yaml.tmpl", struct{ Port int }{port})
}

// classifierOptions describe a single-node collector (testdata/classifier.yaml.tmpl): gpu_mem
// on a scenario plus file_log on the scenario's log directory, both through oom_classifier
// into file exporters.
type classifierOptions struct {
	scenario   string            // absolute path
	interval   string            // collection_interval; "" = 1s
	thresholds map[string]string // oom_classifier.thresholds
	// noXid switches both Xid sources off; otherwise the simulator's kernel records are read
	// from {{DIR}}/kmsg and NVML events are on.
	noXid bool
}

// classifierConfig is the configuration a user would write for one GPU node.
func classifierConfig(t *testing.T, o classifierOptions) string {
	return renderConfig(t, "classifier.yaml.tmpl", struct {
		Scenario, Interval string
		Thresholds         map[string]string
		NoXid              bool
	}{o.scenario, o.interval, o.thresholds, o.noXid})
}

// Every template renders to YAML a collector can read, with what the test asked for in it;
// no collector binary needed.
func TestConfigTemplates(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	require.NoError(t, err)
	rendered := map[string]string{
		"metrics.yaml.tmpl":    renderConfig(t, "metrics.yaml.tmpl", nil),
		"agent.yaml.tmpl":      agentConfig(t, "/s/a.yaml", "node-a", 4317),
		"gateway.yaml.tmpl":    gatewayConfig(t, 4317),
		"nvml.yaml.tmpl":       renderConfig(t, "nvml.yaml.tmpl", struct{ LibraryPath string }{"/lib/libnvidia-ml.so.1"}),
		"classifier.yaml.tmpl": classifierConfig(t, classifierOptions{scenario: "/s/b.yaml", interval: "500ms", thresholds: map[string]string{"leak_min_duration": "10s"}}),
		"kubernetes.yaml.tmpl": renderConfig(t, "kubernetes.yaml.tmpl", struct {
			Scenario, Socket string
			OTLPPort         int
		}{"/s/k.yaml", "/tmp/k/kubelet.sock", 4318}),
	}
	for _, e := range entries {
		assert.Contains(t, rendered, e.Name(), "template %s has no check here", e.Name())
	}
	for name, cfg := range rendered {
		var m map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(strings.ReplaceAll(cfg, "{{DIR}}", "/tmp/x")), &m), "%s:\n%s", name, cfg)
		assert.Contains(t, m, "service", name)
	}
	assert.Contains(t, rendered["agent.yaml.tmpl"], "endpoint: 127.0.0.1:4317")
	assert.Contains(t, rendered["agent.yaml.tmpl"], "value: node-a")
	c := rendered["classifier.yaml.tmpl"]
	assert.Contains(t, c, "collection_interval: 500ms")
	assert.Contains(t, c, "    thresholds:\n      leak_min_duration: 10s\n")
	assert.Contains(t, c, "kmsg_path: {{DIR}}/kmsg")
	off := classifierConfig(t, classifierOptions{scenario: "/s/b.yaml", noXid: true})
	assert.Contains(t, off, "nvml_events: false\n      kmsg_path: \"\"\n")
	assert.Contains(t, off, "collection_interval: 1s")
	assert.NotContains(t, off, "thresholds:")
}

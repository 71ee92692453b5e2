//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// demoGPU3 is the built-in scenario's leaking GPU (testdata/scenarios/builtin.yaml).
const demoGPU3 = "GPU-a29e5a51-e267-3de8-f8a0-87fa47c0cac0"

// demoConfig is testdata/demo/config.yaml as `make demo` runs it, with two changes a test
// needs: the scenario's log directory moves into the test's own directory, and each exporter
// becomes a file exporter of the same name suffix writing there (a debug exporter's console
// output becomes a file; the pipelines follow). Everything else, the processor's settings
// included, stays as shipped.
func demoConfig(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(testdata(t, "demo", "config.yaml"))
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &cfg))

	receivers := cfg["receivers"].(map[string]any)
	sim := receivers["gpu_mem"].(map[string]any)["simulated"].(map[string]any)
	oldDir := sim["log_dir"].(string)
	require.NotEmpty(t, oldDir)
	sim["log_dir"] = "{{DIR}}/app"
	fileLog := receivers["file_log"].(map[string]any)
	for i, inc := range fileLog["include"].([]any) {
		fileLog["include"].([]any)[i] = strings.Replace(inc.(string), oldDir, "{{DIR}}/app", 1)
	}

	renamed := map[string]string{}
	exporters := map[string]any{}
	for id := range cfg["exporters"].(map[string]any) {
		require.True(t, strings.HasPrefix(id, "debug") || strings.HasPrefix(id, "file"),
			"the demo exports to debug and file only, got %s", id)
		_, suffix, _ := strings.Cut(id, "/")
		newID := "file/" + suffix
		renamed[id] = newID
		exporters[newID] = map[string]any{"path": fmt.Sprintf("{{DIR}}/%s.jsonl", suffix), "flush_interval": "100ms"}
	}
	cfg["exporters"] = exporters
	service := cfg["service"].(map[string]any)
	for _, p := range service["pipelines"].(map[string]any) {
		pipeline := p.(map[string]any)
		for i, id := range pipeline["exporters"].([]any) {
			pipeline["exporters"].([]any)[i] = renamed[id.(string)]
		}
	}
	out, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	return string(out)
}

// TestDemo runs `make demo`'s configuration and waits for the built-in scenario's OOM: GPU 3
// leaks from 6 to 78 GiB over 50 s and its PyTorch process fails at 50 s. The demo is meant
// to show that OOM classified as a memory leak. Slow by nature (the OOM comes at 50 s).
func TestDemo(t *testing.T) {
	t.Parallel()
	c := startCollector(t, demoConfig(t))
	logsPath := filepath.Join(c.dir, "logs.jsonl")
	ooms := waitForRecords(t, c, logsPath, 120*time.Second, 1, "the demo's classified OOM", isOOM)
	c.stop(t)

	require.Len(t, ooms, 1, "one OOM in the first minute")
	r := ooms[0]
	t.Logf("demo OOM: cause=%v contributing=%v confidence=%v\n  evidence: %v\n  recommendation: %v",
		r.Attrs["gpu.oom.cause"], r.Attrs["gpu.oom.contributing_causes"], r.Attrs["gpu.oom.confidence"],
		r.Attrs["gpu.oom.evidence"], r.Attrs["gpu.oom.recommendation"])
	assert.Equal(t, demoGPU3, r.Attrs["hw.id"], "matched by pid 43001 to GPU 3")
	assert.Equal(t, "pytorch", r.Attrs["gpu.oom.framework"])
	assert.Equal(t, gib(2), r.Attrs["gpu.oom.requested_bytes"])
	assert.Equal(t, gib(78), r.Attrs["gpu.oom.process_bytes"])
	assert.Equal(t, "memory_leak", r.Attrs["gpu.oom.cause"], "evidence: %v", r.Attrs["gpu.oom.evidence"])

	// The demo's other stories reach the output too: the Xid 31 of GPU 2 at 20 s, and the
	// metrics of all eight GPUs (MIG instances, "MIG-…", are resources of their own).
	xids := filter(logRecords(t, logsPath), isXid)
	if assert.Len(t, xids, 1) {
		assert.Equal(t, int64(31), xids[0].Attrs["nvidia.gpu.xid"])
		assert.Equal(t, "GPU-9d04dab6-ab9a-aed0-eab8-b3b017719797", xids[0].Resource["hw.id"])
	}
	gpus := map[string]bool{}
	for _, p := range metricPoints(t, filepath.Join(c.dir, "metrics.jsonl")) {
		if id, _ := p.Resource["hw.id"].(string); strings.HasPrefix(id, "GPU-") {
			gpus[id] = true
		}
	}
	assert.Len(t, gpus, 8)
	assert.True(t, gpus[demoGPU3])
}

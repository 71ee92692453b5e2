//go:build e2e

package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func isOOMPredicted(r record) bool { return r.EventName == "nvidia.gpu.memory.oom_predicted" }

// TestDemoRunwayBeforeOOM: on `make demo`'s configuration the leaking GPU 3 gets a runway and
// a predicted-OOM record well before its process fails at 50 s, and the classified OOM cites
// the forecast.
func TestDemoRunwayBeforeOOM(t *testing.T) {
	t.Parallel()
	c := startCollector(t, demoConfig(t))
	logsPath := filepath.Join(c.dir, "logs.jsonl")
	ooms := waitForRecords(t, c, logsPath, 120*time.Second, 1, "the demo's classified OOM", isOOM)
	c.stop(t)
	oom := ooms[0]
	oomAt := oom.Time
	if oomAt.IsZero() {
		oomAt = oom.Observed
	}

	recs := logRecords(t, logsPath)
	preds := filter(recs, isOOMPredicted)
	require.NotEmpty(t, preds, "a predicted-OOM record")
	p := preds[0]
	t.Logf("predicted %s before the OOM: %s", oomAt.Sub(p.Time), p.Body)
	assert.Equal(t, demoGPU3, p.Resource["hw.id"])
	assert.Equal(t, "WARN", p.Severity)
	assert.Equal(t, int64(43001), p.Attrs["process.pid"])
	assert.Equal(t, "python3", p.Attrs["process.executable.name"])
	assert.Equal(t, "58924405-8f7d-7f61-cb45-71b1ea365c6a", p.Attrs["k8s.pod.uid"])
	assert.InDelta(t, 72.0/50*(1<<30), p.Attrs["nvidia.gpu.process.memory.growth"], 0.1*(1<<30), "the leak's 1.44 GiB/s")
	assert.Less(t, p.Attrs["nvidia.gpu.memory.runway"], 900.0)
	assert.Greater(t, oomAt.Sub(p.Time), 15*time.Second, "the forecast comes well before the OOM")
	assert.Contains(t, p.Body, "GPU memory will be full in about")
	first, firstOOM := -1, -1
	for i, r := range recs {
		if isOOMPredicted(r) && first < 0 {
			first = i
		}
		if isOOM(r) && firstOOM < 0 {
			firstOOM = i
		}
	}
	assert.Less(t, first, firstOOM, "the forecast reaches the exporter before the OOM does")
	assert.Contains(t, oom.Attrs["gpu.oom.evidence"], "the gpu_mem receiver predicted it", "the classifier cites the forecast")

	var runway []point
	for _, pt := range metricPoints(t, filepath.Join(c.dir, "metrics.jsonl")) {
		if pt.Metric == "nvidia.gpu.memory.runway" && pt.Time.Before(oomAt) {
			require.Equal(t, demoGPU3, pt.Resource["hw.id"], "only the leaking GPU has a runway")
			runway = append(runway, pt)
		}
	}
	require.NotEmpty(t, runway, "runway points before the OOM")
	assert.Greater(t, oomAt.Sub(runway[0].Time), 15*time.Second)
	assert.Greater(t, runway[0].Value, runway[len(runway)-1].Value, "the runway shrinks as the GPU fills")
}

//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// garbageConfig runs gpu_mem on the garbage scenario with a runway that speaks after 10 s of
// growth and warns below 1 min, its metrics and records into file exporters.
const garbageConfig = `
receivers:
  gpu_mem:
    collection_interval: 1s
    backend: simulated
    simulated:
      scenario: %s
    xid:
      kmsg_path: ""
    runway:
      min_duration: 10s
      window: 1m
      warn_below: 1m
exporters:
  file/metrics:
    path: {{DIR}}/metrics.jsonl
    flush_interval: 100ms
  file/logs:
    path: {{DIR}}/logs.jsonl
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [gpu_mem]
      exporters: [file/metrics]
    logs:
      receivers: [gpu_mem]
      exporters: [file/logs]
`

// TestGarbageReadings: the built binary on NVML readings no GPU can give (used and free over
// the total, used below zero, no total, pid 0, a process larger than the GPU, a pid twice, a
// 2-second glitch that reads the GPU full, a UUID that changes at an index) emits no
// negative, over-limit or >1 value, no forecast from the glitch, counts what it rejected,
// and reports as many GPUs as there are.
func TestGarbageReadings(t *testing.T) {
	t.Parallel()
	scenario := testdata(t, "scenarios", "garbage", "garbage.yaml")
	c := startCollector(t, fmt.Sprintf(garbageConfig, scenario))
	path := filepath.Join(c.dir, "metrics.jsonl")
	const gpu0, newGPU1 = "GPU-9a5ba9e0-0000-4000-8000-000000000000", "GPU-5ca1ab1e-0000-4000-8000-000000000001"
	e2eharness.WaitFor(t, 90*time.Second, c, "the scenario's last glitch counted and GPU 1 replaced", func() bool {
		v, ok := latest(metricPoints(t, path), "nvidia.gpu.readings.rejected", gpu0, map[string]any{"nvidia.gpu.reading.reason": "process_duplicate"})
		_, replaced := latest(metricPoints(t, path), "hw.gpu.memory.usage", newGPU1, nil)
		return ok && v >= 3 && replaced
	})
	c.stop(t)

	pts := metricPoints(t, path)
	// A GPU's limit is its total, the same in every scrape that has one (a scrape whose
	// memory reading was dropped has none, but may have process points).
	limits := map[string]float64{}
	key := func(p point) string { return fmt.Sprint(p.Resource["hw.id"]) }
	for _, p := range pts {
		if p.Metric == "hw.gpu.memory.limit" {
			if l, ok := limits[key(p)]; ok {
				assert.Equal(t, l, p.Value, "a GPU's limit does not change")
			}
			limits[key(p)] = p.Value
			assert.Positive(t, p.Value)
		}
	}
	gpusAt := map[int64]map[string]bool{}
	for _, p := range pts {
		switch p.Metric {
		case "hw.gpu.memory.usage", "nvidia.gpu.memory.free", "nvidia.gpu.memory.reserved", "nvidia.gpu.memory.unattributed", "nvidia.gpu.process.memory.usage":
			assert.GreaterOrEqual(t, p.Value, 0.0, "%s %v", p.Metric, p)
			if l, ok := limits[key(p)]; assert.True(t, ok, "a limit beside %s", p.Metric) {
				assert.LessOrEqual(t, p.Value, l, "%s over the limit: %v", p.Metric, p)
			}
			if pid, ok := p.Attrs["process.pid"]; ok {
				assert.NotZero(t, pid, "a point of pid 0")
			}
		case "hw.gpu.memory.utilization":
			assert.GreaterOrEqual(t, p.Value, 0.0)
			assert.LessOrEqual(t, p.Value, 1.0)
		case "hw.status":
			if gpusAt[p.Time.UnixNano()] == nil {
				gpusAt[p.Time.UnixNano()] = map[string]bool{}
			}
			gpusAt[p.Time.UnixNano()][p.Resource["hw.id"].(string)] = true
		}
	}
	for at, gpus := range gpusAt {
		assert.LessOrEqual(t, len(gpus), 2, "at %s: %v", time.Unix(0, at), gpus)
	}

	for _, reason := range []string{"memory_mismatch", "memory_impossible", "process_pid_zero", "process_over_limit", "process_duplicate"} {
		v, ok := latest(pts, "nvidia.gpu.readings.rejected", gpu0, map[string]any{"nvidia.gpu.reading.reason": reason})
		assert.True(t, ok, reason)
		assert.GreaterOrEqual(t, v, 2.0, "%s counted", reason)
	}
	recs := logRecords(t, filepath.Join(c.dir, "logs.jsonl"))
	assert.Empty(t, filter(recs, isOOMPredicted), "no forecast from a glitch")

	log := c.Output()
	for _, reason := range []string{"memory_mismatch", "memory_impossible", "process_pid_zero", "process_over_limit", "process_duplicate"} {
		assert.Equal(t, 1, strings.Count(log, `"reason": "`+reason+`"`), "one warning for %s\n%s", reason, log)
	}
	assert.Equal(t, 1, strings.Count(log, "GPU replaced"), log)
}

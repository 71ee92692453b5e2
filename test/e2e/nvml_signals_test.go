//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
	"github.com/gpumem/otelcol-gpumem/test/fakenvml"
)

// nvmlPoint is one exported data point of the GPU, by metric name.
type nvmlPoint struct {
	metric string
	value  float64
	attrs  map[string]any
}

// lastScrape returns the points of the newest batch in the file exporter's output that has
// the given metric, or nil.
func lastScrape(t *testing.T, path, metric string) []nvmlPoint {
	t.Helper()
	batches := e2eharness.ReadMetrics(t, path)
	for i := len(batches) - 1; i >= 0; i-- {
		var pts []nvmlPoint
		found := false
		rms := batches[i].ResourceMetrics()
		for r := 0; r < rms.Len(); r++ {
			ms := rms.At(r).ScopeMetrics().At(0).Metrics()
			for j := 0; j < ms.Len(); j++ {
				m := ms.At(j)
				dps := pmetric.NewNumberDataPointSlice()
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				}
				found = found || m.Name() == metric
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					v := dp.DoubleValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
						v = float64(dp.IntValue())
					}
					pts = append(pts, nvmlPoint{m.Name(), v, dp.Attributes().AsRaw()})
				}
			}
		}
		if found {
			return pts
		}
	}
	return nil
}

func pointsOf(pts []nvmlPoint, metric string) []nvmlPoint {
	var out []nvmlPoint
	for _, p := range pts {
		if p.metric == metric {
			out = append(out, p)
		}
	}
	return out
}

// TestNVMLProcessUtilizationAndModes runs the distribution on the real NVML path, against
// the stand-in library, and compares what it exports for per-process utilization,
// persistence mode and compute mode with what the library answered, for a process the test
// starts (so the /proc lookups are real).
func TestNVMLProcessUtilizationAndModes(t *testing.T) {
	dir := t.TempDir()
	sleeper := exec.Command("sleep", "120")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	pid := sleeper.Process.Pid

	scenario := filepath.Join(dir, "scenario")
	require.NoError(t, fakenvml.Scenario{}.Set("driver_version", "570.86.15").Set("gpu_count", 1).
		GPU(0, "uuid", "GPU-11111111-2222-3333-4444-555555555555").GPU(0, "name", "NVIDIA A100-SXM4-40GB").
		GPU(0, "serial", "1323456789012").GPU(0, "bus_id", "00000000:3B:00.0").
		GPU(0, "mem.total", 40<<30).GPU(0, "mem.free", 30<<30).GPU(0, "mem.used", 10<<30).
		GPU(0, "mem2.total", 40<<30).GPU(0, "mem2.reserved", 512<<20).GPU(0, "mem2.used", 9<<30).
		GPU(0, "procs.compute", fmt.Sprintf("%d:%d", pid, 1<<30)).
		GPU(0, "putil", fmt.Sprintf("%d:87:41", pid)).
		GPU(0, "persistence", 0).GPU(0, "compute_mode", 3). // NVML_COMPUTEMODE_EXCLUSIVE_PROCESS
		Write(scenario))
	t.Setenv(fakenvml.ScenarioEnv, scenario)

	lib := fakenvml.MustBuild(t, t.TempDir(), fakenvml.Full)
	c := startCollector(t, renderConfig(t, "nvml.yaml.tmpl", struct{ LibraryPath string }{lib}))
	path := filepath.Join(c.dir, "metrics.jsonl")
	var pts []nvmlPoint
	e2eharness.WaitFor(t, 30*time.Second, c, "a scrape with the compute mode", func() bool {
		pts = lastScrape(t, path, "nvidia.gpu.compute_mode")
		return pts != nil
	})

	persistence := pointsOf(pts, "nvidia.gpu.persistence_mode")
	require.Len(t, persistence, 1)
	assert.Equal(t, 0.0, persistence[0].value, "persistence off, as the library says")
	modes := map[any]float64{}
	for _, p := range pointsOf(pts, "nvidia.gpu.compute_mode") {
		modes[p.attrs["nvidia.gpu.compute_mode"]] = p.value
	}
	assert.Equal(t, map[any]float64{"default": 0, "exclusive_process": 1, "prohibited": 0}, modes)

	byTask := map[any]nvmlPoint{}
	for _, p := range pointsOf(pts, "nvidia.gpu.process.utilization") {
		byTask[p.attrs["hw.gpu.task"]] = p
	}
	require.Len(t, byTask, 2, "general and memory_controller: %v", pts)
	assert.Equal(t, 0.87, byTask["general"].value)
	assert.Equal(t, 0.41, byTask["memory_controller"].value)
	for _, p := range byTask {
		assert.Equal(t, int64(pid), p.attrs["process.pid"])
		assert.Equal(t, "sleep", p.attrs["process.executable.name"], "from the real /proc/<pid>/comm")
	}
}

//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
	"github.com/gpumem/otelcol-gpumem/test/fakenvml"
)

// These tests run the distribution with backend: nvml against the stand-in NVML library
// (test/fakenvml): go-nvml dlopens it and calls its C symbols through cgo, as on a GPU node.
// Every exported value is compared with what the library answered.

const nvmlConfig = `
receivers:
  gpu_mem:
    collection_interval: 1s
    backend: nvml
    library_path: {{LIB}}
    processes:
      proc_root: /proc
    xid:
      nvml_events: true
      kmsg_path: ""
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

const (
	gpu0 = "GPU-00000000-1111-2222-3333-444444444444" // A100 in MIG mode, two instances
	gpu1 = "GPU-11111111-1111-2222-3333-444444444444" // V100: page retirement, no MIG, no remap
	mig2 = "MIG-22222222-1111-2222-3333-444444444444"
	mig5 = "MIG-55555555-1111-2222-3333-444444444444"
)

// nvmlNode is a collector on the stand-in library with the scenario it answers from.
type nvmlNode struct {
	c        *collector
	scn      fakenvml.Scenario
	scnPath  string
	pids     []int // real processes the "driver" lists
	variant  fakenvml.Variant
	testName string
}

// sleepers starts n processes that live as long as the test, so /proc lookups are real.
func sleepers(t *testing.T, n int) []int {
	t.Helper()
	var pids []int
	for range n {
		cmd := exec.Command("sleep", "600")
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	return pids
}

// baseScenario is a node of two GPUs; pids are the processes it lists.
func baseScenario(pids []int) fakenvml.Scenario {
	const gib = 1 << 30
	return fakenvml.Scenario{}.Set("driver_version", "470.256.02").Set("gpu_count", 2).
		GPU(0, "uuid", gpu0).GPU(0, "name", "NVIDIA A100-SXM4-40GB").GPU(0, "serial", "1320000000001").GPU(0, "bus_id", "00000000:3B:00.0").
		GPU(0, "mem.total", 40*gib).GPU(0, "mem.free", 25*gib).GPU(0, "mem.used", 15*gib).
		GPU(0, "mem2.total", 40*gib).GPU(0, "mem2.reserved", 600<<20).GPU(0, "mem2.used", 14*gib).
		GPU(0, "procs.compute", fmt.Sprintf("%d:%d", pids[0], 3*gib)). // listed only outside MIG mode
		GPU(0, "remap", "3 1 0 0").GPU(0, "ecc.mode", 1).GPU(0, "ecc.corrected", 12).GPU(0, "ecc.uncorrected", 2).
		GPU(0, "mig.mode", 1).GPU(0, "mig.count", 7).
		GPU(0, "mig.2.uuid", mig2).GPU(0, "mig.2.name", "NVIDIA A100-SXM4-40GB MIG 3g.20gb").GPU(0, "mig.2.gi", 2).GPU(0, "mig.2.ci", 0).
		GPU(0, "mig.2.mem2.total", 20*gib).GPU(0, "mig.2.mem2.used", 9*gib).
		GPU(0, "mig.2.mem.total", 20*gib).GPU(0, "mig.2.mem.free", 11*gib).GPU(0, "mig.2.mem.used", 9*gib).
		GPU(0, "mig.2.procs.compute", fmt.Sprintf("%d:%d %d:%d", pids[1], 5*gib, pids[2], 3*gib)).
		GPU(0, "mig.5.uuid", mig5).GPU(0, "mig.5.name", "NVIDIA A100-SXM4-40GB MIG 1g.5gb").GPU(0, "mig.5.gi", 5).GPU(0, "mig.5.ci", 0).
		GPU(0, "mig.5.mem2.total", 5*gib).GPU(0, "mig.5.mem2.used", 1*gib).
		GPU(0, "mig.5.mem.total", 5*gib).GPU(0, "mig.5.mem.free", 4*gib).GPU(0, "mig.5.mem.used", 1*gib).
		GPU(1, "uuid", gpu1).GPU(1, "name", "Tesla V100-SXM2-32GB").GPU(1, "serial", "1320000000002").GPU(1, "vbios", "88.00.4F.00.09").GPU(1, "bus_id", "00000000:86:00.0").
		GPU(1, "mem.total", 32*gib).GPU(1, "mem.free", 20*gib).GPU(1, "mem.used", 12*gib).
		GPU(1, "mem2.total", 32*gib).GPU(1, "mem2.reserved", 300<<20).GPU(1, "mem2.used", 11*gib).
		GPU(1, "procs.compute", fmt.Sprintf("%d:%d %d:%d", pids[3], 4*gib, pids[4], 6*gib)).
		GPU(1, "procs.graphics", fmt.Sprintf("%d:%d", pids[4], 6*gib)).
		GPU(1, "util.gpu", 37).GPU(1, "retired.sbe", 2).GPU(1, "retired.dbe", 1).GPU(1, "retired.pending", 0).
		GPU(1, "ecc.mode", 1).GPU(1, "ecc.corrected", 5).GPU(1, "ecc.uncorrected", 0)
}

// startNVMLNode builds the variant of the library, writes the scenario and runs the collector.
func startNVMLNode(t *testing.T, v fakenvml.Variant, scn func(pids []int) fakenvml.Scenario) *nvmlNode {
	t.Helper()
	dir := t.TempDir()
	lib := fakenvml.MustBuild(t, dir, v)
	n := &nvmlNode{pids: sleepers(t, 5), variant: v, scnPath: filepath.Join(dir, "scenario"), testName: t.Name()}
	n.scn = scn(n.pids)
	require.NoError(t, n.scn.Write(n.scnPath))
	t.Setenv(fakenvml.ScenarioEnv, n.scnPath)
	n.c = startCollector(t, strings.ReplaceAll(nvmlConfig, "{{LIB}}", lib))
	return n
}

func (n *nvmlNode) update(t *testing.T, fn func(fakenvml.Scenario)) {
	t.Helper()
	fn(n.scn)
	require.NoError(t, n.scn.Write(n.scnPath))
}

// scrapes waits until the file exporter holds at least k scrapes and returns them all.
func (n *nvmlNode) scrapes(t *testing.T, k int) []pmetric.Metrics {
	t.Helper()
	path := filepath.Join(n.c.dir, "metrics.jsonl")
	var got []pmetric.Metrics
	e2eharness.WaitFor(t, 30*time.Second, n.c, fmt.Sprintf("%d scrapes", k), func() bool {
		got = e2eharness.ReadMetrics(t, path)
		return len(got) >= k
	})
	return got
}

// flatten is one scrape as hw.id → "metric{attr=value,...}" → value. Per-process points
// carry pid, type and executable name; container and pod attributes are checked apart.
func flatten(t *testing.T, md pmetric.Metrics) map[string]map[string]float64 {
	t.Helper()
	out := map[string]map[string]float64{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		id, _ := rm.Resource().Attributes().Get("hw.id")
		res := map[string]float64{}
		out[id.Str()] = res
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			if m.Type() == pmetric.MetricTypeGauge {
				dps = m.Gauge().DataPoints()
			} else {
				dps = m.Sum().DataPoints()
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				v := dp.DoubleValue()
				if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
					v = float64(dp.IntValue())
				}
				key := m.Name() + attrKey(dp.Attributes())
				_, dup := res[key]
				assert.False(t, dup, "one point per key: %s on %s", key, id.Str())
				res[key] = v
			}
		}
	}
	return out
}

func attrKey(attrs pcommon.Map) string {
	var parts []string
	attrs.Range(func(k string, v pcommon.Value) bool {
		switch k {
		case "container.id", "k8s.pod.uid":
		default:
			parts = append(parts, k+"="+v.AsString())
		}
		return true
	})
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// features is what a library variant exports of what the expectations depend on.
type features struct{ memoryV2, remap, mig bool }

func featuresOf(v fakenvml.Variant) features {
	f := features{memoryV2: true, remap: true, mig: true}
	for _, d := range v.Defines {
		switch d {
		case "FAKENVML_NO_MEMORY_V2":
			f.memoryV2 = false
		case "FAKENVML_NO_REMAPPED_ROWS":
			f.remap = false
		case "FAKENVML_NO_MIG":
			f.mig = false
		}
	}
	return f
}

// expected is what the receiver must export for baseScenario on a library with f, written
// out from the scenario's numbers (not computed by the receiver's code).
func expected(pids []int, f features) map[string]map[string]float64 {
	const gib = float64(1 << 30)
	proc := func(pid int, typ string) string {
		return fmt.Sprintf("nvidia.gpu.process.memory.usage{nvidia.gpu.process.type=%s,process.executable.name=sleep,process.pid=%d}", typ, pid)
	}
	status := func(state string) map[string]float64 {
		m := map[string]float64{}
		for _, s := range []string{"ok", "degraded", "failed"} {
			v := 0.0
			if s == state {
				v = 1
			}
			m["hw.status{hw.state="+s+",hw.type=gpu}"] = v
		}
		return m
	}
	memory := func(m map[string]float64, total, usedV2, reserved, freeV1 float64) {
		m["hw.gpu.memory.limit"] = total
		if f.memoryV2 {
			m["hw.gpu.memory.usage"] = usedV2
			m["nvidia.gpu.memory.free"] = total - reserved - usedV2
			m["nvidia.gpu.memory.reserved"] = reserved
			m["hw.gpu.memory.utilization"] = usedV2 / total
		} else {
			m["hw.gpu.memory.usage"] = total - freeV1
			m["nvidia.gpu.memory.free"] = freeV1
			m["hw.gpu.memory.utilization"] = (total - freeV1) / total
		}
	}
	counts := func(m map[string]float64, compute, graphics float64) {
		m["nvidia.gpu.process.count{nvidia.gpu.process.type=compute}"] = compute
		m["nvidia.gpu.process.count{nvidia.gpu.process.type=graphics}"] = graphics
	}

	g0 := status("ok")
	memory(g0, 40*gib, 14*gib, 600<<20, 25*gib)
	if f.remap {
		g0["nvidia.gpu.memory.remapped_rows{nvidia.gpu.remap.type=correctable}"] = 3
		g0["nvidia.gpu.memory.remapped_rows{nvidia.gpu.remap.type=uncorrectable}"] = 1
		g0["nvidia.gpu.memory.remapped_rows.pending"] = 0
		g0["nvidia.gpu.memory.remapped_rows.failed"] = 0
	}
	g0["nvidia.gpu.ecc.mode"] = 1
	g0["nvidia.gpu.process.hidden"] = 0 // the test runs in its host's PID namespace
	g0["hw.errors{error.type=corrected,hw.type=gpu}"] = 12
	g0["hw.errors{error.type=uncorrected,hw.type=gpu}"] = 2

	g1 := status("ok")
	memory(g1, 32*gib, 11*gib, 300<<20, 20*gib)
	g1[proc(pids[3], "compute")] = 4 * gib
	g1[proc(pids[4], "compute")] = 6 * gib
	g1[proc(pids[4], "graphics")] = 6 * gib
	counts(g1, 2, 1)
	if f.memoryV2 {
		g1["nvidia.gpu.memory.unattributed"] = 11*gib - 10*gib // pid 4 counted once
	}
	g1["hw.gpu.utilization{hw.gpu.task=general}"] = 0.37
	g1["nvidia.gpu.memory.retired_pages{nvidia.gpu.retirement.cause=single_bit_ecc}"] = 2
	g1["nvidia.gpu.memory.retired_pages{nvidia.gpu.retirement.cause=double_bit_ecc}"] = 1
	g1["nvidia.gpu.memory.retired_pages.pending"] = 0
	g1["nvidia.gpu.ecc.mode"] = 1
	g1["nvidia.gpu.process.hidden"] = 0
	g1["hw.errors{error.type=corrected,hw.type=gpu}"] = 5
	g1["hw.errors{error.type=uncorrected,hw.type=gpu}"] = 0

	out := map[string]map[string]float64{gpu0: g0, gpu1: g1}
	if !f.mig {
		// The GPU is not split: its own process list is read.
		g0[proc(pids[0], "compute")] = 3 * gib
		counts(g0, 1, 0)
		if f.memoryV2 {
			g0["nvidia.gpu.memory.unattributed"] = 14*gib - 3*gib
		}
		return out
	}
	m2 := map[string]float64{}
	memory(m2, 20*gib, 9*gib, 0, 11*gib)
	m2[proc(pids[1], "compute")] = 5 * gib
	m2[proc(pids[2], "compute")] = 3 * gib
	counts(m2, 2, 0)
	m5 := map[string]float64{}
	memory(m5, 5*gib, 1*gib, 0, 4*gib)
	counts(m5, 0, 0)
	if f.memoryV2 {
		m2["nvidia.gpu.memory.unattributed"] = 9*gib - 8*gib
		m5["nvidia.gpu.memory.unattributed"] = 1 * gib
	}
	out[mig2], out[mig5] = m2, m5
	return out
}

// TestNVMLBackendExactValues: the full library, every value exact, resources as NVML
// describes them, and Xid events through the event set (on a GPU and on a MIG instance).
func TestNVMLBackendExactValues(t *testing.T) {
	n := startNVMLNode(t, fakenvml.Full, baseScenario)
	got := n.scrapes(t, 3)
	assert.Equal(t, expected(n.pids, featuresOf(fakenvml.Full)), flatten(t, got[len(got)-1]))

	res := map[string]map[string]any{}
	last := got[len(got)-1]
	for i := 0; i < last.ResourceMetrics().Len(); i++ {
		a := last.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
		res[a["hw.id"].(string)] = a
	}
	assert.Equal(t, map[string]any{
		"hw.id": gpu1, "hw.type": "gpu", "hw.vendor": "nvidia", "hw.name": "GPU 1", "hw.model": "Tesla V100-SXM2-32GB",
		"hw.driver_version": "470.256.02", "hw.serial_number": "1320000000002", "hw.firmware_version": "88.00.4F.00.09",
		"nvidia.gpu.index": int64(1), "nvidia.gpu.pci.bus_id": "00000000:86:00.0",
	}, res[gpu1])
	assert.Equal(t, gpu0, res[mig5]["hw.parent"])
	assert.Equal(t, int64(5), res[mig5]["nvidia.gpu.mig.gpu_instance_id"])
	assert.Equal(t, int64(0), res[mig5]["nvidia.gpu.mig.compute_instance_id"])
	assert.Equal(t, "1g.5gb", res[mig5]["nvidia.gpu.mig.profile"])
	assert.Equal(t, "3g.20gb", res[mig2]["nvidia.gpu.mig.profile"])

	// Xids through the event set: one on GPU 1, one naming MIG instance 5 of GPU 0, one
	// naming an instance that does not exist (attributed to the GPU).
	time.Sleep(1500 * time.Millisecond) // the watcher registers within a second of NVML coming up
	n.update(t, func(s fakenvml.Scenario) { s.Set("xid.1", "1 31").Set("xid.2", "0 94 5 0").Set("xid.3", "0 94 9 0") })
	logsPath := filepath.Join(n.c.dir, "logs.jsonl")
	records := map[string][]int64{}
	e2eharness.WaitFor(t, 20*time.Second, n.c, "three Xid records", func() bool {
		records = map[string][]int64{}
		count := 0
		for _, ld := range e2eharness.ReadLogs(t, logsPath) {
			for i := 0; i < ld.ResourceLogs().Len(); i++ {
				rl := ld.ResourceLogs().At(i)
				id, _ := rl.Resource().Attributes().Get("hw.id")
				lrs := rl.ScopeLogs().At(0).LogRecords()
				for j := 0; j < lrs.Len(); j++ {
					code, _ := lrs.At(j).Attributes().Get("nvidia.gpu.xid")
					src, _ := lrs.At(j).Attributes().Get("nvidia.gpu.xid.source")
					assert.Equal(t, "nvml", src.Str())
					records[id.Str()] = append(records[id.Str()], code.Int())
					count++
				}
			}
		}
		return count >= 3
	})
	assert.Equal(t, map[string][]int64{gpu1: {31}, mig5: {94}, gpu0: {94}}, records)
	e2eharness.WaitFor(t, 10*time.Second, n.c, "Xid counts in the metrics", func() bool {
		all := e2eharness.ReadMetrics(t, filepath.Join(n.c.dir, "metrics.jsonl"))
		f := flatten(t, all[len(all)-1])
		return f[gpu1]["nvidia.gpu.xid.errors{nvidia.gpu.xid=31}"] == 1 &&
			f[mig5]["nvidia.gpu.xid.errors{nvidia.gpu.xid=94}"] == 1 && f[gpu0]["nvidia.gpu.xid.errors{nvidia.gpu.xid=94}"] == 1
	})
	assert.NotContains(t, n.c.Output(), "Error scraping metrics")
}

// TestNVMLDriverVariants: libraries of older driver branches and without optional calls.
// Each keeps the collector running, with exactly the metrics that remain.
func TestNVMLDriverVariants(t *testing.T) {
	for _, v := range []fakenvml.Variant{fakenvml.R470, fakenvml.R450, fakenvml.NoRemap, fakenvml.NoMIG, fakenvml.NoProcessUtilization} {
		t.Run(v.Name, func(t *testing.T) {
			n := startNVMLNode(t, v, baseScenario)
			got := n.scrapes(t, 3)
			assert.False(t, n.c.Exited(), "the collector keeps running")
			assert.Equal(t, expected(n.pids, featuresOf(v)), flatten(t, got[len(got)-1]))
			assert.NotContains(t, n.c.Output(), "Error scraping metrics")
			n.c.stop(t)
		})
	}
}

// TestNVMLLostGPU: a GPU that answers GPU_IS_LOST gives one WARN naming it, its bus id and
// what to do, hw.status failed, no error per scrape, and is picked up again with one INFO
// when it answers again (the receiver re-enumerates every 30 s).
func TestNVMLLostGPU(t *testing.T) {
	n := startNVMLNode(t, fakenvml.Full, baseScenario)
	n.scrapes(t, 2)
	n.update(t, func(s fakenvml.Scenario) { s.GPU(1, "ret.all", 15) }) // NVML_ERROR_GPU_IS_LOST
	path := filepath.Join(n.c.dir, "metrics.jsonl")
	latest := func() map[string]map[string]float64 {
		all := e2eharness.ReadMetrics(t, path)
		return flatten(t, all[len(all)-1])
	}
	failed := "hw.status{hw.state=failed,hw.type=gpu}"
	e2eharness.WaitFor(t, 10*time.Second, n.c, "hw.status failed", func() bool { return latest()[gpu1][failed] == 1 })
	lostAt := len(e2eharness.ReadMetrics(t, path))
	n.scrapes(t, lostAt+5)
	g1 := latest()[gpu1]
	assert.Equal(t, map[string]float64{
		failed: 1, "hw.status{hw.state=ok,hw.type=gpu}": 0, "hw.status{hw.state=degraded,hw.type=gpu}": 0,
	}, g1, "a lost GPU reports its state only")
	assert.Equal(t, expected(n.pids, featuresOf(fakenvml.Full))[gpu0], latest()[gpu0], "the other GPU goes on")
	out := n.c.Output()
	assert.Equal(t, 1, strings.Count(out, "GPU lost"), out)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "GPU lost") {
			assert.Contains(t, line, "warn")
			assert.Contains(t, line, gpu1)
			assert.Contains(t, line, "00000000:86:00.0")
			assert.Contains(t, line, "reboot the node")
		}
	}
	assert.NotContains(t, out, "Error scraping metrics")
	assert.False(t, n.c.Exited())

	// Reset: the GPU answers again and is picked up at the next re-enumeration.
	n.update(t, func(s fakenvml.Scenario) { delete(s, "gpu.1.ret.all") })
	e2eharness.WaitFor(t, 45*time.Second, n.c, "the GPU back", func() bool { return latest()[gpu1]["hw.status{hw.state=ok,hw.type=gpu}"] == 1 })
	n.scrapes(t, len(e2eharness.ReadMetrics(t, path))+1)
	assert.Equal(t, expected(n.pids, featuresOf(fakenvml.Full))[gpu1], latest()[gpu1], "every metric back")
	assert.Equal(t, 1, strings.Count(n.c.Output(), "GPU is back"))
}

// TestNVMLDownSendsNothing: while NVML cannot be initialised the receiver sends nothing
// downstream (no empty batch per second) and says why once, and the health check with
// component status shows the receiver's recoverable error; once NVML comes up, metrics flow.
func TestNVMLDownSendsNothing(t *testing.T) {
	dir := t.TempDir()
	lib := fakenvml.MustBuild(t, dir, fakenvml.Full)
	scnPath := filepath.Join(dir, "scenario")
	scn := baseScenario(sleepers(t, 5)).Set("init", 9) // NVML_ERROR_DRIVER_NOT_LOADED
	require.NoError(t, scn.Write(scnPath))
	t.Setenv(fakenvml.ScenarioEnv, scnPath)
	// The two health checks of deploy/kubernetes/agent-configmap.yaml: readiness counts
	// recoverable errors, liveness does not.
	port, livePort := e2eharness.FreePort(t), e2eharness.FreePort(t)
	cfg := strings.ReplaceAll(nvmlConfig, "{{LIB}}", lib)
	cfg = strings.Replace(cfg, "service:\n", fmt.Sprintf(`extensions:
  health_check:
    http:
      endpoint: 127.0.0.1:%d
      status:
        enabled: true
        path: /health/status
    component_health:
      include_recoverable_errors: true
      recovery_duration: 1s
  health_check/live:
    http:
      endpoint: 127.0.0.1:%d
      status:
        enabled: true
        path: /health/status
service:
  extensions: [health_check, health_check/live]
`, port, livePort), 1)
	c := startCollector(t, cfg, "--feature-gates=+extension.healthcheck.useComponentStatus")
	url := fmt.Sprintf("http://127.0.0.1:%d/health/status?verbose", port)
	var body string
	e2eharness.WaitFor(t, 20*time.Second, c, "the health check to report the receiver's error", func() bool {
		code, b := httpGet(url)
		body = b
		return code == http.StatusInternalServerError && strings.Contains(b, "receiver:gpu_mem")
	})
	t.Logf("health status while NVML is down: %s", body)
	assert.Contains(t, body, "StatusRecoverableError")
	code, _ := httpGet(fmt.Sprintf("http://127.0.0.1:%d/health/status", livePort))
	assert.Equal(t, http.StatusOK, code, "liveness does not count a recoverable error")
	time.Sleep(3 * time.Second)
	metricsPath := filepath.Join(c.dir, "metrics.jsonl")
	assert.Empty(t, e2eharness.ReadMetrics(t, metricsPath), "nothing sent downstream while NVML is down")
	assert.Equal(t, 1, strings.Count(c.Output(), "NVML could not be initialised"))

	require.NoError(t, scn.Set("init", 0).Write(scnPath))
	e2eharness.WaitFor(t, 30*time.Second, c, "metrics once NVML is up", func() bool { return len(e2eharness.ReadMetrics(t, metricsPath)) > 0 })
	e2eharness.WaitFor(t, 10*time.Second, c, "the health check to recover", func() bool {
		code, _ := httpGet(url)
		return code == 200
	})
}

// httpGet answers the status code and body, or 0 when the server does not answer.
func httpGet(url string) (int, string) {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestNVMLMIGModeChange: NVML answers NOT_SUPPORTED for row remapping while MIG instances
// exist; once the GPU leaves MIG mode remapping is asked again and reported, and the GPU lists
// its own processes.
func TestNVMLMIGModeChange(t *testing.T) {
	n := startNVMLNode(t, fakenvml.Full, func(pids []int) fakenvml.Scenario {
		return baseScenario(pids).GPU(0, "ret.remapped_rows", 3) // NVML_ERROR_NOT_SUPPORTED
	})
	got := n.scrapes(t, 2)
	g0 := flatten(t, got[len(got)-1])[gpu0]
	assert.NotContains(t, g0, "nvidia.gpu.memory.remapped_rows{nvidia.gpu.remap.type=correctable}")

	n.update(t, func(s fakenvml.Scenario) {
		s.GPU(0, "mig.mode", 0)
		delete(s, "gpu.0.ret.remapped_rows")
	})
	path := filepath.Join(n.c.dir, "metrics.jsonl")
	e2eharness.WaitFor(t, 20*time.Second, n.c, "remapped rows after MIG mode was left", func() bool {
		all := e2eharness.ReadMetrics(t, path)
		_, ok := flatten(t, all[len(all)-1])[gpu0]["nvidia.gpu.memory.remapped_rows{nvidia.gpu.remap.type=correctable}"]
		return ok
	})
	n.scrapes(t, len(e2eharness.ReadMetrics(t, path))+1)
	all := e2eharness.ReadMetrics(t, path)
	last := flatten(t, all[len(all)-1])
	assert.Equal(t, expected(n.pids, features{memoryV2: true, remap: true, mig: false})[gpu0], last[gpu0], "the whole GPU again")
	assert.NotContains(t, last, mig2, "no MIG instances")
}

// TestNVMLXid79MarksLost: Xid 79 (fallen off the bus) through the NVML event set marks the GPU
// lost as GPU_IS_LOST does: one WARN naming the source, hw.status failed.
func TestNVMLXid79MarksLost(t *testing.T) {
	n := startNVMLNode(t, fakenvml.Full, baseScenario)
	n.scrapes(t, 2)
	time.Sleep(1500 * time.Millisecond) // the watcher registers within a second of NVML coming up
	n.update(t, func(s fakenvml.Scenario) { s.Set("xid.1", "1 79") })
	path := filepath.Join(n.c.dir, "metrics.jsonl")
	e2eharness.WaitFor(t, 15*time.Second, n.c, "hw.status failed after Xid 79", func() bool {
		all := e2eharness.ReadMetrics(t, path)
		return flatten(t, all[len(all)-1])[gpu1]["hw.status{hw.state=failed,hw.type=gpu}"] == 1
	})
	out := n.c.Output()
	assert.Equal(t, 1, strings.Count(out, "GPU lost"), out)
	assert.Contains(t, out, "Xid 79 (nvml)")
}

// holdsFile says whether process pid has path open (its /proc/<pid>/fd links).
func holdsFile(t *testing.T, pid int, path string) bool {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestNVMLDriverGoneAndBack: the driver goes away under a running collector (unloaded for an
// in-place upgrade: every call answers DRIVER_NOT_LOADED). The collector shuts NVML down, so
// it holds none of the driver's files (the stand-in opens one on the first nvmlInit and
// closes it on the last nvmlShutdown, as the real library does with /dev/nvidia*), says so
// once, reports a recoverable error, and comes back with metrics when the driver does.
func TestNVMLDriverGoneAndBack(t *testing.T) {
	dir := t.TempDir()
	devFile := filepath.Join(dir, "nvidiactl")
	require.NoError(t, os.WriteFile(devFile, nil, 0o600))
	t.Setenv("FAKENVML_DEVICE_FILE", devFile)
	n := startNVMLNode(t, fakenvml.Full, baseScenario)
	n.scrapes(t, 1)
	pid := n.c.Pid()
	require.True(t, holdsFile(t, pid, devFile), "NVML holds the driver's files while up")

	n.update(t, func(s fakenvml.Scenario) {
		s.GPU(0, "ret.all", 9).GPU(1, "ret.all", 9).Set("init", 9) // NVML_ERROR_DRIVER_NOT_LOADED
	})
	e2eharness.WaitFor(t, 20*time.Second, n.c, "the driver's files to be let go", func() bool { return !holdsFile(t, pid, devFile) })
	e2eharness.WaitFor(t, 10*time.Second, n.c, "the warning", func() bool {
		return strings.Contains(n.c.Output(), "the NVIDIA driver went away")
	})
	time.Sleep(3 * time.Second) // retries keep failing meanwhile
	assert.Equal(t, 1, strings.Count(n.c.Output(), "the NVIDIA driver went away"), "one line:\n%s", n.c.Output())
	assert.False(t, holdsFile(t, pid, devFile), "a failing init holds nothing")
	before := len(e2eharness.ReadMetrics(t, filepath.Join(n.c.dir, "metrics.jsonl")))

	n.update(t, func(s fakenvml.Scenario) {
		delete(s, "gpu.0.ret.all")
		delete(s, "gpu.1.ret.all")
		s.Set("init", 0)
	})
	e2eharness.WaitFor(t, 90*time.Second, n.c, "metrics again once the driver is back", func() bool {
		return len(e2eharness.ReadMetrics(t, filepath.Join(n.c.dir, "metrics.jsonl"))) > before+1
	})
	assert.True(t, holdsFile(t, pid, devFile), "NVML is up again")
	assert.Contains(t, n.c.Output(), "NVML initialised after retry")
}

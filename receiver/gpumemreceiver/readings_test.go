package gpumemreceiver

import (
	"context"
	"fmt"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
)

// assertPossible fails on any emitted value no GPU can have: negative memory, memory over
// the GPU's limit, a utilization outside 0..1, a process over the limit or with pid 0.
func assertPossible(t *testing.T, got map[string]map[string][]point, step string) {
	t.Helper()
	for gpu, ms := range got {
		limit := -1.0
		if l := ms["hw.gpu.memory.limit"]; len(l) == 1 {
			limit = l[0].value
			assert.Positive(t, limit, "%s %s: limit", step, gpu)
		}
		for _, name := range []string{"hw.gpu.memory.usage", "nvidia.gpu.memory.free", "nvidia.gpu.memory.reserved", "nvidia.gpu.memory.unattributed", "nvidia.gpu.process.memory.usage"} {
			for _, p := range ms[name] {
				assert.GreaterOrEqual(t, p.value, 0.0, "%s %s: %s", step, gpu, name)
				if limit >= 0 {
					assert.LessOrEqual(t, p.value, limit, "%s %s: %s over the limit", step, gpu, name)
				}
				if pid, ok := p.attrs["process.pid"]; ok {
					assert.NotZero(t, pid, "%s %s: %s of pid 0", step, gpu, name)
				}
			}
		}
		for _, p := range ms["hw.gpu.memory.utilization"] {
			assert.GreaterOrEqual(t, p.value, 0.0, "%s %s: utilization", step, gpu)
			assert.LessOrEqual(t, p.value, 1.0, "%s %s: utilization", step, gpu)
		}
		if ms["hw.gpu.memory.usage"] != nil && ms["nvidia.gpu.memory.free"] != nil && ms["nvidia.gpu.memory.reserved"] != nil {
			sum := ms["hw.gpu.memory.usage"][0].value + ms["nvidia.gpu.memory.free"][0].value + ms["nvidia.gpu.memory.reserved"][0].value
			assert.InDelta(t, limit, sum, memoryTolerance, "%s %s: used + free + reserved = total", step, gpu)
		}
	}
}

func rejected(gpu map[string][]point) map[string]float64 {
	out := map[string]float64{}
	for _, p := range gpu["nvidia.gpu.readings.rejected"] {
		out[p.attrs["nvidia.gpu.reading.reason"].(string)] = p.value
	}
	return out
}

// Impossible memory readings and process lists: no impossible number is emitted, each
// rejection is counted by reason, and each kind warns once per device however long it lasts.
func TestImpossibleReadingsNeverEmitted(t *testing.T) {
	g := newFakeGPU(0)
	lib := newFakeNVML(g)
	var raw *nvml.Memory_v2 // nil: the fake GPU's own consistent reading
	honest := lib.devices[0].GetMemoryInfo_v2Func
	lib.devices[0].GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		if raw != nil {
			return *raw, nvml.SUCCESS
		}
		return honest()
	}
	o := startObserved(t, lib)
	total, reserved := uint64(g.total), uint64(g.reserved)
	const ugib = uint64(gib)

	got, err := o.scrape(t)
	require.NoError(t, err)
	assertPossible(t, got, "clean")
	assert.Empty(t, rejected(got[g.uuid]), "no series before the first rejection")

	steps := []struct {
		name string
		mem  nvml.Memory_v2
		want string // the reason counted
		kept bool   // memory metrics still emitted (repaired)
	}{
		{"used > total", nvml.Memory_v2{Total: total, Reserved: reserved, Used: total + 50*ugib, Free: 10 * ugib}, "memory_mismatch", true},
		{"free > total", nvml.Memory_v2{Total: total, Reserved: reserved, Used: 20 * ugib, Free: total + ugib}, "memory_mismatch", true},
		{"used + free != total", nvml.Memory_v2{Total: total, Reserved: reserved, Used: 60 * ugib, Free: 60 * ugib}, "memory_mismatch", true},
		{"used wraps below 0", nvml.Memory_v2{Total: total, Reserved: reserved, Used: ^uint64(0) - ugib, Free: 30 * ugib}, "memory_mismatch", true},
		{"neither fits", nvml.Memory_v2{Total: total, Reserved: reserved, Used: total + ugib, Free: total + ugib}, "memory_impossible", false},
		{"no total", nvml.Memory_v2{Total: 0, Used: ugib, Free: ugib}, "memory_impossible", false},
	}
	counts := map[string]float64{}
	for _, st := range steps {
		for range 3 { // lasting three scrapes: counted thrice, warned of once
			raw = &st.mem
			got, err = o.scrape(t)
			require.NoError(t, err, st.name)
			assertPossible(t, got, st.name)
			counts[st.want]++
			assert.Equal(t, counts, rejected(got[g.uuid]), st.name)
			if st.kept {
				assert.Contains(t, got[g.uuid], "hw.gpu.memory.usage", st.name)
			} else {
				assert.NotContains(t, got[g.uuid], "hw.gpu.memory.usage", st.name)
				assert.NotContains(t, got[g.uuid], "hw.gpu.memory.utilization", st.name)
			}
		}
	}
	// Used is recomputed from free, the reading believed.
	raw = &nvml.Memory_v2{Total: total, Reserved: reserved, Used: 60 * ugib, Free: 10 * ugib}
	got, err = o.scrape(t)
	require.NoError(t, err)
	assert.Equal(t, float64(total-reserved-10*ugib), got[g.uuid]["hw.gpu.memory.usage"][0].value)

	raw = nil
	g.compute = []nvml.ProcessInfo{
		{Pid: 0, UsedGpuMemory: ugib},
		{Pid: 4242, UsedGpuMemory: total + ugib}, // more than the GPU
		{Pid: 101, UsedGpuMemory: 2 * ugib},
		{Pid: 101, UsedGpuMemory: 2 * ugib}, // listed twice
	}
	for range 3 {
		got, err = o.scrape(t)
		require.NoError(t, err)
		assertPossible(t, got, "processes")
	}
	c := rejected(got[g.uuid])
	assert.Equal(t, 3.0, c["process_pid_zero"])
	assert.Equal(t, 3.0, c["process_over_limit"])
	assert.Equal(t, 3.0, c["process_duplicate"])
	procs := got[g.uuid]["nvidia.gpu.process.memory.usage"]
	require.Len(t, procs, 1, "only pid 101, once")
	assert.EqualValues(t, 101, procs[0].attrs["process.pid"])
	// unattributed: 10 GiB used, 2 GiB of it pid 101's.
	assert.Equal(t, float64(8*gib), got[g.uuid]["nvidia.gpu.memory.unattributed"][0].value)

	warns := map[string]int{}
	for _, e := range o.logs.FilterLevelExact(zapcore.WarnLevel).All() {
		if r, ok := e.ContextMap()["reason"].(string); ok {
			warns[r]++
			assert.Equal(t, g.uuid, e.ContextMap()["gpu"])
		}
	}
	assert.Equal(t, map[string]int{"memory_mismatch": 1, "memory_impossible": 1, "process_pid_zero": 1, "process_over_limit": 1, "process_duplicate": 1}, warns,
		"one warning per kind of reading, not per scrape")
}

// A GPU whose index answers with another UUID (a reset, a swapped board) retires the old
// GPU's series: as many GPUs are reported as there are.
func TestUUIDChangeRetiresOldGPU(t *testing.T) {
	a, b := newFakeGPU(0), newFakeGPU(1)
	lib := newFakeNVML(a, b)
	o := startObserved(t, lib)
	got, err := o.scrape(t)
	require.NoError(t, err)
	require.Len(t, got, 2)
	old := a.uuid

	a.uuid = "GPU-99999999-aaaa-bbbb-cccc-dddddddddddd"
	for i := 0; i < 31 && got[a.uuid] == nil; i++ {
		got, err = o.scrape(t)
		require.NoError(t, err)
	}
	require.Contains(t, got, a.uuid, "the new GPU is found")
	assert.NotContains(t, got, old, "the old GPU's series end")
	assert.Len(t, got, 2, "two GPUs, not three")
	for range 3 {
		got, err = o.scrape(t)
		require.NoError(t, err)
		assert.Len(t, got, 2)
	}
	replaced := o.logs.FilterMessageSnippet("GPU replaced").All()
	require.Len(t, replaced, 1)
	assert.Equal(t, old, replaced[0].ContextMap()["old_gpu"])
	assert.Equal(t, a.uuid, replaced[0].ContextMap()["gpu"])
}

// A 2-second glitch in which NVML's free reads 1 MiB while used goes on with a slow leak
// (runway about 55 min, above warn_below): free / growth would be a runway of a second. No
// predicted-OOM record goes out, and the leak's runway is back once the glitch has passed.
func TestRunwayGlitchNoForecast(t *testing.T) {
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 4242}}
	lib := newFakeNVML(g)
	glitch := false
	honest := lib.devices[0].GetMemoryInfo_v2Func
	lib.devices[0].GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
		m, r := honest()
		if glitch {
			m.Free = uint64(mib)
		}
		return m, r
	}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	sink := new(consumertest.LogsSink)
	r := startRunway(t, lib, clk.Now, nil, sink)
	var last map[string]map[string][]point
	for sec := 0; sec <= 400; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		g.used = 10*gib + int64(sec)*20*mib
		glitch = sec == 300 || sec == 301
		g.compute[0].UsedGpuMemory = uint64(g.used)
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		last = byGPU(md)
		assertPossible(t, last, fmt.Sprintf("at %d s", sec))
	}
	assert.Zero(t, sink.LogRecordCount(), "no forecast from a glitch")
	p := last[g.uuid]["nvidia.gpu.memory.runway"]
	require.Len(t, p, 1, "the leak's runway")
	assert.Greater(t, p[0].value, 15*60.0)
}

// The garbage scenario (testdata/scenarios/garbage) on an injected clock, with a runway that
// speaks after 10 s of growth: no impossible value in any scrape, no forecast from the
// 2-second glitch, each kind counted, and GPU 1's new UUID replaces the old one.
func TestGarbageScenario(t *testing.T) {
	scn, err := simnvml.LoadScenario(filepath.Join("..", "..", "testdata", "scenarios", "garbage", "garbage.yaml"))
	require.NoError(t, err)
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	sim, err := simnvml.New(scn, simnvml.Options{Now: clk.Now, Start: start})
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	cfg.Xid = XidConfig{}
	cfg.Runway.MinDuration, cfg.Runway.Window, cfg.Runway.WarnBelow = 10*time.Second, time.Minute, time.Minute
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	r.now = clk.Now
	r.newBackend = func(*Config) (node.Node, error) { return node.Node{Lib: sim, ProcFS: sim.ProcFS()}, nil }
	sink := new(consumertest.LogsSink)
	r.nextLogs = sink
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	const newGPU1 = "GPU-5ca1ab1e-0000-4000-8000-000000000001"
	var got map[string]map[string][]point
	runway := 0
	for sec := 0; sec <= 70; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		got = byGPU(md)
		assertPossible(t, got, fmt.Sprintf("at %d s", sec))
		if sec > 31 {
			assert.Len(t, got, 2, "at %d s: two GPUs", sec)
		}
		for _, g := range got {
			if len(g["nvidia.gpu.memory.runway"]) > 0 {
				runway++
			}
		}
	}
	assert.Zero(t, sink.LogRecordCount(), "no forecast")
	assert.Positive(t, runway, "GPU 0's leak has a runway")
	assert.Contains(t, got, newGPU1)
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	require.Len(t, ids, 2, "%v", ids)
	g0 := ""
	for _, id := range ids {
		if id != newGPU1 {
			g0 = id
		}
	}
	assert.Equal(t, map[string]float64{
		"memory_mismatch": 3 + 3 + 2 + 3, "memory_impossible": 3,
		"process_pid_zero": 3, "process_over_limit": 3, "process_duplicate": 3,
	}, rejected(got[g0]))
}

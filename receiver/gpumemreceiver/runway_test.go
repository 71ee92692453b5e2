package gpumemreceiver

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/internal/ramp"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// One episode per crossing: a runway that wobbles across the threshold, or whose fit fails
// for a scrape, does not warn again; one that has stayed clear for min_duration re-arms.
func TestRunwayEpisodes(t *testing.T) {
	tr := newRunwayTracker(RunwayConfig{Enabled: true, WarnBelow: 15 * time.Minute, Window: 10 * time.Minute, MinDuration: 2 * time.Minute},
		time.Second, nil, "test", nil)
	d := &runwayDevice{}
	s := func(sec int) int64 { return int64(sec) * int64(time.Second) }
	steps := []struct {
		sec   int
		below bool
		warn  bool
	}{
		{0, false, false},
		{1, true, false}, // crosses: not yet a forecast
		{2, true, false},
		{3, false, false}, // reverses within seconds: no record
		{4, true, false},
		{8, true, false},   // below 4 s
		{9, true, true},    // below 5 s in 3 scrapes: the record
		{10, false, false}, // wobbles above
		{60, true, false},  // back below within min_duration: the same episode
		{61, false, false},
		{180, false, false}, // clear 119 s: not yet
		{181, false, false}, // clear 120 s: the episode ends
		{182, true, false},  // a new one, once it persists
		{185, true, false},
		{187, true, true},
	}
	for _, st := range steps {
		assert.Equal(t, st.warn, tr.episodeStep(d, st.below, s(st.sec)), "at %d s", st.sec)
	}
}

// Each history keeps at most the window and maxPoints, in an array at most twice that size,
// and starts over when the clock goes back.
func TestRunwayHistoryBounded(t *testing.T) {
	var h history
	const maxPoints = 100
	for i := 1; i <= 10000; i++ {
		h.push(ramp.Point{T: int64(i), V: float64(i)}, maxPoints, 0)
		require.LessOrEqual(t, len(h.points()), maxPoints)
		require.LessOrEqual(t, cap(h.arr), 2*maxPoints+64, "at %d", i)
	}
	pts := h.points()
	assert.Equal(t, int64(10000), pts[len(pts)-1].T)
	assert.Equal(t, int64(9901), pts[0].T)

	h.push(ramp.Point{T: 10010, V: 1}, maxPoints, 10005) // the window cuts the rest
	assert.Len(t, h.points(), 1)
	h.push(ramp.Point{T: 10010, V: 2}, maxPoints, 0) // the same instant: replaced
	assert.Equal(t, []ramp.Point{{T: 10010, V: 2}}, h.points())
	h.push(ramp.Point{T: 20000, V: 3}, maxPoints, 0)
	h.push(ramp.Point{T: 5, V: 4}, maxPoints, 0) // the clock went back
	assert.Equal(t, []ramp.Point{{T: 5, V: 4}}, h.points())
}

// startRunway starts a receiver on a fake library with an injected clock and a logs sink.
func startRunway(t *testing.T, lib nvml.Interface, clock func() time.Time, logger *zap.Logger, sink *consumertest.LogsSink) *gpuMemReceiver {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Xid = XidConfig{}
	set := receivertest.NewNopSettings(metadata.Type)
	if logger != nil {
		set.Logger = logger
	}
	r := newGPUMemReceiver(cfg, set)
	r.now = clock
	r.newBackend = func(*Config) (node.Node, error) {
		return node.Node{Lib: lib, ProcFS: procTree(map[uint32]procEntry{4242: {"python3", "0::/\n"}})}, nil
	}
	if sink != nil {
		r.nextLogs = sink
	}
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return r
}

// A leak of 50 MiB/s under ±256 MiB of noise on the process (allocator churn) and on the GPU
// (another process's steps): the runway is there nearly every second once the ramp is 2 min
// old, within 10% of the truth, and one record goes out.
func TestRunwayNoisyLeak(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 4242}}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	sink := new(consumertest.LogsSink)
	r := startRunway(t, newFakeNVML(g), clk.Now, nil, sink)

	avail := g.total - g.reserved
	present, after := 0, 0
	for sec := 0; ; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		leak := 5*gib + int64(sec)*50*mib
		noise := int64((rng.Float64() - 0.5) * float64(512*mib))
		other := 2 * gib
		if rng.IntN(10) == 0 {
			other += 256 * mib
		}
		if leak+noise+other >= avail {
			break
		}
		g.compute[0].UsedGpuMemory = uint64(leak + noise)
		g.used = leak + noise + other
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		if sec < 180 {
			continue
		}
		after++
		p := byGPU(md)[g.uuid]["nvidia.gpu.memory.runway"]
		if len(p) == 0 {
			continue
		}
		present++
		truth := float64(avail-g.used) / float64(50*mib)
		assert.InDelta(t, truth, p[0].value, 0.1*truth+10, "at %d s", sec)
	}
	assert.Greater(t, float64(present)/float64(after), 0.9, "runway present %d of %d seconds", present, after)
	assert.Equal(t, 1, sink.LogRecordCount())
}

// A leak inside a MIG instance has the instance's runway, on the instance's resource; the
// GPU's own memory (the aggregate) is not read and has none.
func TestRunwayMIGInstance(t *testing.T) {
	g := newFakeGPU(0)
	g.mig = &fakeMIG{enabled: true}
	inst := &fakeInstance{uuid: "MIG-00000001-aaaa-bbbb-cccc-dddddddddddd", name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
		gi: 9, total: 9984 * mib, compute: []nvml.ProcessInfo{{Pid: 4242}}}
	g.mig.slots = []*fakeInstance{inst}
	g.memV2, g.memV1 = nvml.ERROR_NO_PERMISSION, nvml.ERROR_NO_PERMISSION
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	sink := new(consumertest.LogsSink)
	r := startRunway(t, newFakeNVML(g), clk.Now, nil, sink)
	var last map[string]map[string][]point
	for sec := 0; sec <= 200; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		inst.used = gib + int64(sec)*20*mib
		inst.compute[0].UsedGpuMemory = uint64(inst.used)
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		last = byGPU(md)
	}
	p := last[inst.uuid]["nvidia.gpu.memory.runway"]
	require.Len(t, p, 1)
	assert.InDelta(t, float64(9984*mib-gib-200*20*mib)/float64(20*mib), p[0].value, 2)
	require.Len(t, last[inst.uuid]["nvidia.gpu.process.memory.growth"], 1)
	assert.Equal(t, int64(4242), last[inst.uuid]["nvidia.gpu.process.memory.growth"][0].attrs["process.pid"])
	assert.Empty(t, last[g.uuid]["nvidia.gpu.memory.runway"])
	require.Equal(t, 1, sink.LogRecordCount(), "runway ~5 min: below 15 min")
	assert.Contains(t, sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str(), "MIG instance 1g.10gb of GPU 0")
}

// Without a logs pipeline the forecast still reaches a person: one Warn line per episode in
// the collector's own log.
func TestRunwayWithoutLogsPipeline(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 4242}}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	r := startRunway(t, newFakeNVML(g), clk.Now, zap.New(core), nil)
	for sec := 0; sec <= 400; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		g.used = 40*gib + int64(sec)*60*mib
		g.compute[0].UsedGpuMemory = uint64(g.used)
		_, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
	}
	got := logs.FilterMessage("GPU out-of-memory predicted").All()
	require.Len(t, got, 1)
	assert.Contains(t, got[0].ContextMap()["record"], "pid 4242 (python3)")
}

// runway.enabled: false turns the forecast off: no metric, no record.
func TestRunwayDisabled(t *testing.T) {
	run := replayRunway(t, "leak.yaml", 1000, func(c *Config) { c.Runway.Enabled = false })
	assert.Empty(t, run.runway)
	assert.Empty(t, run.growth)
	assert.Empty(t, run.records)
}

// A GPU in MIG mode whose aggregate memory is readable (a privileged collector) has no runway
// and sends no record of its own: a leak in one instance is one record, on the instance,
// although the GPU's free memory falls as fast and would run out within warn_below too.
func TestRunwayMIGParentDoesNotWarn(t *testing.T) {
	g := newFakeGPU(0)
	g.mig = &fakeMIG{enabled: true}
	inst := &fakeInstance{uuid: "MIG-00000001-aaaa-bbbb-cccc-dddddddddddd", name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
		gi: 9, total: 9984 * mib, compute: []nvml.ProcessInfo{{Pid: 4242}}}
	g.mig.slots = []*fakeInstance{inst}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	sink := new(consumertest.LogsSink)
	r := startRunway(t, newFakeNVML(g), clk.Now, nil, sink)
	var last map[string]map[string][]point
	for sec := 0; sec <= 200; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		inst.used = gib + int64(sec)*20*mib
		inst.compute[0].UsedGpuMemory = uint64(inst.used)
		g.used = 70*gib + inst.used // the other instances hold 70 GiB: ~6 min of aggregate left
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		last = byGPU(md)
	}
	require.NotEmpty(t, last[g.uuid]["hw.gpu.memory.usage"], "the GPU's aggregate is read")
	assert.Empty(t, last[g.uuid]["nvidia.gpu.memory.runway"], "no runway on a GPU in MIG mode")
	require.Len(t, last[inst.uuid]["nvidia.gpu.memory.runway"], 1)
	require.Equal(t, 1, sink.LogRecordCount(), "one leak, one record")
	rl := sink.AllLogs()[0].ResourceLogs().At(0)
	id, _ := rl.Resource().Attributes().Get("hw.id")
	assert.Equal(t, inst.uuid, id.Str())
	assert.Contains(t, rl.ScopeLogs().At(0).LogRecords().At(0).Body().Str(), "MIG instance 1g.10gb of GPU 0")
}

package gpumemreceiver

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"
)

// runwayRun is what a replay of a scenario produced, per second of scenario time.
type runwayRun struct {
	runway  map[int]float64 // second → nvidia.gpu.memory.runway of GPU 0
	growth  map[int]float64 // second → largest nvidia.gpu.process.memory.growth on GPU 0
	records []plog.LogRecord
	at      []int // second each record was sent
	res     []map[string]any
}

// replayRunway plays a scenario of testdata/scenarios/runway through the receiver on an
// injected clock, one scrape per simulated second, with the default configuration.
func replayRunway(t *testing.T, name string, seconds int, mods ...func(*Config)) runwayRun {
	t.Helper()
	scn, err := simnvml.LoadScenario(filepath.Join("..", "..", "testdata", "scenarios", "runway", name))
	require.NoError(t, err)
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	clock := clk.Now
	sim, err := simnvml.New(scn, simnvml.Options{Now: clock, Start: start})
	require.NoError(t, err)

	cfg := createDefaultConfig().(*Config)
	cfg.Xid = XidConfig{}
	for _, mod := range mods {
		mod(cfg)
	}
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	r.now = clock
	r.newBackend = func(*Config) (node.Node, error) { return node.Node{Lib: sim, ProcFS: sim.ProcFS()}, nil }
	sink := new(consumertest.LogsSink)
	r.nextLogs = sink
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	run := runwayRun{runway: map[int]float64{}, growth: map[int]float64{}}
	for sec := 0; sec <= seconds; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		for _, g := range byGPU(md) {
			if p := g["nvidia.gpu.memory.runway"]; len(p) > 0 {
				run.runway[sec] = p[0].value
			}
			for _, p := range g["nvidia.gpu.process.memory.growth"] {
				run.growth[sec] = max(run.growth[sec], p.value)
			}
		}
		for _, ld := range sink.AllLogs() {
			for i := 0; i < ld.ResourceLogs().Len(); i++ {
				rl := ld.ResourceLogs().At(i)
				lrs := rl.ScopeLogs().At(0).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					run.records = append(run.records, lrs.At(k))
					run.at = append(run.at, sec)
					run.res = append(run.res, rl.Resource().Attributes().AsRaw())
				}
			}
		}
		sink.Reset()
	}
	return run
}

// fakeClock is an injected clock the test sets while the receiver's goroutines read it.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.Set(t)
	return c
}

func (c *fakeClock) Now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// firstKey is the smallest second in m, -1 when m is empty.
func firstKey(m map[int]float64) int {
	first := -1
	for k := range m {
		if first < 0 || k < first {
			first = k
		}
	}
	return first
}

// A leak of 40 MiB/s: the runway appears once growth has been steady for min_duration, falls
// as the GPU fills, and one predicted-OOM record goes out when it crosses 15 min, naming the
// leaking process, long before the GPU is full.
func TestRunwayScenarioLeakWarns(t *testing.T) {
	run := replayRunway(t, "leak.yaml", 1500)
	// 81559 MiB − 512 MiB reserved − the worker's 512 MiB leave 80535 MiB; from 10 GiB at
	// 40 MiB/s that is full at 1757 s.
	const fullAt = (80535 - 10240) / 40

	first := firstKey(run.runway)
	assert.InDelta(t, 121, first, 5, "runway appears after 2 min of steady growth")
	assert.InDelta(t, fullAt-first, run.runway[first], 30, "runway at %d s", first)
	assert.InDelta(t, fullAt-1400, run.runway[1400], 10)
	assert.InDelta(t, float64(40*mib), run.growth[1400], float64(mib), "the leaking process's rate")

	require.Len(t, run.records, 1, "one record per episode")
	lr := run.records[0]
	assert.InDelta(t, fullAt-15*60, run.at[0], 10, "sent when the runway crossed 15 min")
	assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
	assert.Equal(t, "nvidia.gpu.memory.oom_predicted", lr.EventName())
	a := lr.Attributes().AsRaw()
	assert.Equal(t, "nvidia.gpu.memory.oom_predicted", a["event.name"])
	assert.Less(t, a["nvidia.gpu.memory.runway"], 900.0)
	assert.Greater(t, a["nvidia.gpu.memory.runway"], 850.0)
	assert.InDelta(t, float64(40*mib), a["nvidia.gpu.memory.growth"], float64(mib))
	assert.InDelta(t, float64(40*mib), a["nvidia.gpu.process.memory.growth"], float64(mib))
	assert.Equal(t, int64(7100), a["process.pid"])
	assert.Equal(t, "python3", a["process.executable.name"])
	assert.Equal(t, "3c1e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80", a["container.id"])
	assert.Equal(t, "6a7b8c9d-0e1f-4a2b-8c4d-5e6f70819a2b", a["k8s.pod.uid"])
	assert.Regexp(t, `^GPU-`, run.res[0]["hw.id"])
	assert.Equal(t, "NVIDIA H100 80GB HBM3", run.res[0]["hw.model"])
	assert.Equal(t, "GPU 0", run.res[0]["hw.name"])
	body := lr.Body().Str()
	assert.Contains(t, body, "GPU memory will be full in about 15 min")
	assert.Contains(t, body, "40.0 MiB/s")
	assert.Contains(t, body, "pid 7100 (python3, container 3c1e5f6a7b8c, pod 6a7b8c9d-0e1f-4a2b-8c4d-5e6f70819a2b)")
	t.Logf("record at %d s: %s", run.at[0], body)
}

// A slow leak (3 MiB/s on a 24 GB GPU): the runway is hours at first, and the one record goes
// out only when it falls below 15 min, still 15 min before the GPU fills.
func TestRunwayScenarioSlowLeakWarns(t *testing.T) {
	run := replayRunway(t, "slow_leak.yaml", 4500)
	const fullAt = (23028 - 420 - 8192) / 3 // MiB free at the start / 3 MiB/s
	assert.Greater(t, run.runway[600], 3600.0, "an hour and more at first")
	assert.InDelta(t, float64(3*mib), run.growth[3000], float64(mib)/4)
	require.Len(t, run.records, 1)
	assert.InDelta(t, fullAt-15*60, run.at[0], 30)
	assert.Equal(t, "tritonserver", run.records[0].Attributes().AsRaw()["process.executable.name"])
}

// A model loaded in shards, then a second one in a step: memory climbs at hundreds of MiB/s
// for 90 s and stops. No runway, no growth, no record.
func TestRunwayScenarioModelLoadIsNotALeak(t *testing.T) {
	run := replayRunway(t, "model_load.yaml", 900)
	assert.Empty(t, run.runway)
	assert.Empty(t, run.growth)
	assert.Empty(t, run.records)
}

// A training loop's sawtooth (4.5 GiB/s for 8 s, freed every 10 s) never holds steady growth
// long enough: no runway, no record.
func TestRunwayScenarioSawtoothIsNotALeak(t *testing.T) {
	run := replayRunway(t, "sawtooth.yaml", 900)
	assert.Empty(t, run.runway)
	assert.Empty(t, run.growth)
	assert.Empty(t, run.records)
}

package gpumemreceiver

import (
	"context"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

func newMIGGPU() *fakeGPU {
	g := newFakeGPU(0)
	g.name = "NVIDIA A100-SXM4-40GB"
	g.remap = &[4]int{1, 0, 0, 0}
	g.ecc = &[2]uint64{3, 0}
	g.compute = []nvml.ProcessInfo{{Pid: 900, UsedGpuMemory: uint64(gib)}} // whole-GPU mode only
	g.mig = &fakeMIG{enabled: true, slots: []*fakeInstance{
		{uuid: "MIG-1111", name: "NVIDIA A100-SXM4-40GB MIG 3g.20gb", gi: 1, ci: 0, total: 19968 * mib, used: 9 * gib,
			compute: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: uint64(8 * gib)}}},
		nil, // an index without an instance: NOT_FOUND
		{uuid: "MIG-2222", name: "NVIDIA A100-SXM4-40GB MIG 1g.5gb", gi: 7, ci: 0, total: 4864 * mib, used: 2 * gib,
			compute: []nvml.ProcessInfo{{Pid: 200, UsedGpuMemory: uint64(2 * gib)}, {Pid: 201, UsedGpuMemory: 0}}},
	}}
	return g
}

// resources flattens metrics into hw.id → resource attributes.
func resources(md pmetric.Metrics) map[string]map[string]any {
	out := map[string]map[string]any{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		attrs := md.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
		out[attrs["hw.id"].(string)] = attrs
	}
	return out
}

// Every MIG instance is a resource of its own with its memory and processes; the GPU keeps
// the device-level metrics and lists no processes.
func TestMIGResources(t *testing.T) {
	g := newMIGGPU()
	r := startWith(t, newFakeNVML(g), procTree(map[uint32]procEntry{100: {"trainer", "0::/\n"}}))
	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)

	res := resources(md)
	require.Len(t, res, 3)
	assert.Equal(t, map[string]any{
		"hw.id": "MIG-1111", "hw.type": "gpu", "hw.vendor": "nvidia", "hw.name": "GPU 0 MIG 1/0",
		"hw.model": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "hw.firmware_version": "96.00.30.00.01",
		"hw.driver_version": "570.86.15", "hw.serial_number": "1323000000000", "hw.parent": g.uuid,
		"nvidia.gpu.index": int64(0), "nvidia.gpu.pci.bus_id": "00000000:18:00.0",
		"nvidia.gpu.mig.gpu_instance_id": int64(1), "nvidia.gpu.mig.compute_instance_id": int64(0),
		"nvidia.gpu.mig.profile": "3g.20gb",
	}, res["MIG-1111"])
	assert.Equal(t, "1g.5gb", res["MIG-2222"]["nvidia.gpu.mig.profile"])
	assert.Equal(t, int64(7), res["MIG-2222"]["nvidia.gpu.mig.gpu_instance_id"])
	assert.NotContains(t, res[g.uuid], "hw.parent")
	assert.NotContains(t, res[g.uuid], "nvidia.gpu.mig.profile")

	got := byGPU(md)
	parent := got[g.uuid]
	for _, name := range []string{"hw.gpu.memory.usage", "nvidia.gpu.memory.remapped_rows", "hw.errors", "nvidia.gpu.ecc.mode"} {
		assert.Contains(t, parent, name, "the GPU keeps %s", name)
	}
	for _, name := range []string{"nvidia.gpu.process.memory.usage", "nvidia.gpu.process.count", "nvidia.gpu.memory.unattributed", "hw.gpu.utilization"} {
		assert.NotContains(t, parent, name, "a MIG GPU has no %s of its own", name)
	}

	big := got["MIG-1111"]
	assert.Equal(t, float64(19968*mib), big["hw.gpu.memory.limit"][0].value)
	assert.Equal(t, float64(9*gib), big["hw.gpu.memory.usage"][0].value)
	assert.Equal(t, float64(gib), big["nvidia.gpu.memory.unattributed"][0].value, "9 GiB used, 8 GiB by pid 100")
	require.Len(t, big["nvidia.gpu.process.memory.usage"], 1)
	assert.Equal(t, int64(100), big["nvidia.gpu.process.memory.usage"][0].attrs["process.pid"])
	assert.Equal(t, "trainer", big["nvidia.gpu.process.memory.usage"][0].attrs["process.executable.name"])
	for _, name := range []string{"hw.errors", "nvidia.gpu.memory.remapped_rows", "hw.gpu.utilization", "nvidia.gpu.ecc.mode"} {
		assert.NotContains(t, big, name, "device-level %s stays with the GPU", name)
	}
	small := got["MIG-2222"]
	assert.Len(t, small["nvidia.gpu.process.memory.usage"], 2)
	assert.Equal(t, 2.0, small["nvidia.gpu.process.count"][0].value)
}

// Reconfiguration is picked up without a restart: MIG turned on within nvmlx.MIGRecheckEvery
// scrapes, an instance destroyed at once (its failing handle triggers a re-read, and its
// errors are not reported), MIG turned off again with utilization probed afresh.
func TestMIGReconfiguration(t *testing.T) {
	g := newMIGGPU()
	instances := g.mig.slots
	g.mig = &fakeMIG{enabled: false}
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	scrape := func() map[string]map[string][]point {
		t.Helper()
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		return byGPU(md)
	}

	got := scrape()
	require.Len(t, got, 1)
	assert.Contains(t, got[g.uuid], "nvidia.gpu.process.memory.usage", "whole-GPU mode")
	assert.Contains(t, got[g.uuid], "hw.gpu.utilization")

	g.mig = &fakeMIG{enabled: true, slots: instances}
	n := 0
	for ; n <= nvmlx.MIGRecheckEvery && len(got) == 1; n++ {
		got = scrape()
	}
	require.Len(t, got, 3, "instances found within %d scrapes", nvmlx.MIGRecheckEvery+1)
	assert.NotContains(t, got[g.uuid], "nvidia.gpu.process.memory.usage")
	assert.NotContains(t, got[g.uuid], "hw.gpu.utilization", "NOT_SUPPORTED in MIG mode")

	// Destroy the 1g.5gb instance: its handle fails from now on.
	gone := instances[2]
	gone.memErr = nvml.ERROR_INVALID_ARGUMENT
	g.mig.slots = instances[:2]
	got = scrape() // no error: the instance is gone, not failing
	assert.Len(t, got, 2)
	assert.NotContains(t, got, gone.uuid)

	// A new instance reuses the index, with a new UUID.
	g.mig.slots = append(instances[:2:2], &fakeInstance{uuid: "MIG-3333", name: "NVIDIA A100-SXM4-40GB MIG 1g.5gb+me", gi: 8, total: 4864 * mib})
	for n = 0; n <= nvmlx.MIGRecheckEvery && len(got) == 2; n++ {
		got = scrape()
	}
	require.Contains(t, got, "MIG-3333")

	g.mig.enabled = false
	for n = 0; n <= nvmlx.MIGRecheckEvery && len(got) > 1; n++ {
		got = scrape()
	}
	require.Len(t, got, 1)
	assert.Contains(t, got[g.uuid], "hw.gpu.utilization", "probed again after MIG was turned off")
	assert.Contains(t, got[g.uuid], "nvidia.gpu.process.memory.usage")
}

// An instance that keeps failing while it exists is a partial scrape error naming it.
func TestMIGInstanceError(t *testing.T) {
	g := newMIGGPU()
	g.mig.slots[0].memErr = nvml.ERROR_UNKNOWN
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	md, err := r.scrapeMetrics(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read memory info v2 of GPU MIG-1111")
	assert.Contains(t, byGPU(md), "MIG-2222", "the other instance reports")
}

// A GPU whose MIG mode NVML cannot tell (pre-Ampere) is asked once.
func TestMIGModeProbedOnce(t *testing.T) {
	g := newFakeGPU(0)
	lib := newFakeNVML(g)
	r := startWith(t, lib, fstest.MapFS{})
	for i := 0; i < 2*nvmlx.MIGRecheckEvery+2; i++ {
		_, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
	}
	assert.Len(t, lib.devices[0].GetMigModeCalls(), 1)
}

// Without privilege NVML refuses a MIG GPU's aggregate memory; that is no error.
func TestMIGParentMemoryNoPermission(t *testing.T) {
	g := newMIGGPU()
	g.memV2 = nvml.ERROR_NO_PERMISSION
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	got := byGPU(md)
	assert.NotContains(t, got[g.uuid], "hw.gpu.memory.usage")
	assert.Contains(t, got["MIG-1111"], "hw.gpu.memory.usage")
}

// The simulator's MIG scenario end to end through the receiver, on a stepped clock: the
// GPU goes into MIG mode at 10 s, an instance is destroyed at 30 s.
func TestSimulatedMIGReconfiguration(t *testing.T) {
	scn, err := simnvml.ParseScenario([]byte(`
duration: 60s
gpus:
  - memory_total: 40GiB
    processes: [{pid: 300, name: whole, memory: 30GiB}]
    mig:
      enabled: {steps: [{at: 10s, value: true}]}
      instances:
        - {profile: 3g.20gb, uuid: MIG-aaaa, stop: 30s, processes: [{pid: 100, name: trainer, memory: 8GiB, vpid: 7}]}
        - {profile: 1g.5gb, uuid: MIG-bbbb, processes: [{pid: 200, name: infer, memory: 2GiB}]}
`), t.TempDir())
	require.NoError(t, err)
	start := time.Unix(1_700_000_000, 0)
	clk := &stepClock{t: start}
	sim, err := simnvml.New(scn, simnvml.Options{Now: clk.now, Start: start})
	require.NoError(t, err)
	r := startWith(t, sim, sim.ProcFS())
	scrape := func() map[string]map[string][]point {
		t.Helper()
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		return byGPU(md)
	}

	got := scrape()
	require.Len(t, got, 1)
	clk.advance(11 * time.Second)
	for i := 0; i <= nvmlx.MIGRecheckEvery && len(got) == 1; i++ {
		got = scrape()
	}
	require.Len(t, got, 3)
	p := got["MIG-aaaa"]["nvidia.gpu.process.memory.usage"]
	require.Len(t, p, 1)
	assert.Equal(t, map[string]any{
		"process.pid": int64(100), "process.vpid": int64(7), "process.executable.name": "trainer", "nvidia.gpu.process.type": "compute",
	}, p[0].attrs)

	clk.advance(20 * time.Second) // 31 s: MIG-aaaa destroyed
	got = scrape()
	assert.Len(t, got, 2)
	assert.NotContains(t, got, "MIG-aaaa")
}

// stepClock is a clock a test moves by hand; the Xid watcher reads it too.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

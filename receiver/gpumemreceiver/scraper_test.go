package gpumemreceiver

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// startWith starts a receiver on the given library and proc tree.
func startWith(t testing.TB, lib nvml.Interface, fsys fs.FS) *gpuMemReceiver {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	r.newBackend = func(c *Config) (node.Node, error) {
		return node.Node{Lib: lib, ProcFS: fsys, KmsgPath: c.Xid.KmsgPath}, nil
	}
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return r
}

// point is one data point, flattened for assertions.
type point struct {
	value float64
	attrs map[string]any
}

// byGPU flattens metrics into hw.id → metric name → points.
func byGPU(md pmetric.Metrics) map[string]map[string][]point {
	out := map[string]map[string][]point{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		id, _ := rm.Resource().Attributes().Get("hw.id")
		gpu := map[string][]point{}
		out[id.Str()] = gpu
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			dps := pmetric.NewNumberDataPointSlice()
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
				gpu[m.Name()] = append(gpu[m.Name()], point{value: v, attrs: dp.Attributes().AsRaw()})
			}
		}
	}
	return out
}

func TestScrapeMemoryAndProcesses(t *testing.T) {
	g := newFakeGPU(0)
	g.used = 30 * gib
	g.compute = []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: uint64(20 * gib)}, {Pid: 200, UsedGpuMemory: uint64(4 * gib)}}
	g.graphics = []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: uint64(20 * gib)}} // C+G: counted once
	fsys := procTree(map[uint32]procEntry{
		100: {"python3", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1b2c3d4e_aaaa_bbbb_cccc_111122223333.slice/cri-containerd-" + hex64 + ".scope\n"},
		// pid 200 exited between NVML's list and the /proc read: no entry.
	})
	// process.executable.name is the exe link's base name, not comm, where the link reads.
	fsys["100/exe"] = &fstest.MapFile{Data: []byte("/usr/local/bin/python3.11"), Mode: fs.ModeSymlink}
	r := startWith(t, newFakeNVML(g), fsys)

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	got := byGPU(md)[g.uuid]
	require.NotNil(t, got)

	assert.Equal(t, float64(30*gib), got["hw.gpu.memory.usage"][0].value)
	assert.Equal(t, float64(g.total), got["hw.gpu.memory.limit"][0].value)
	assert.Equal(t, float64(g.total-g.reserved-g.used), got["nvidia.gpu.memory.free"][0].value)
	assert.Equal(t, float64(g.reserved), got["nvidia.gpu.memory.reserved"][0].value)
	assert.InDelta(t, float64(30*gib)/float64(g.total), got["hw.gpu.memory.utilization"][0].value, 1e-12)
	assert.Equal(t, float64(6*gib), got["nvidia.gpu.memory.unattributed"][0].value, "30 GiB used - (20 + 4) GiB attributed")
	assert.Equal(t, 0.42, got["hw.gpu.utilization"][0].value)
	assert.Equal(t, "general", got["hw.gpu.utilization"][0].attrs["hw.gpu.task"])

	procs := got["nvidia.gpu.process.memory.usage"]
	require.Len(t, procs, 3)
	assert.Equal(t, map[string]any{
		"process.pid": int64(100), "process.vpid": int64(1), "process.executable.name": "python3.11", "nvidia.gpu.process.type": "compute",
		"container.id": hex64, "k8s.pod.uid": "1b2c3d4e-aaaa-bbbb-cccc-111122223333",
	}, procs[0].attrs)
	assert.Equal(t, map[string]any{"process.pid": int64(200), "nvidia.gpu.process.type": "compute"}, procs[1].attrs,
		"an exited process keeps its pid and memory")
	assert.Equal(t, float64(4*gib), procs[1].value)
	assert.Equal(t, "graphics", procs[2].attrs["nvidia.gpu.process.type"])

	counts := got["nvidia.gpu.process.count"]
	require.Len(t, counts, 2)
	assert.Equal(t, 2.0, counts[0].value)
	assert.Equal(t, 1.0, counts[1].value)
}

// A process in a Slurm job step carries the job and step its cgroup names, and no container
// or pod: a Slurm node's processes are the host's.
func TestScrapeSlurmJobProcess(t *testing.T) {
	g := newFakeGPU(0)
	g.used = 10 * gib
	g.compute = []nvml.ProcessInfo{{Pid: 300, UsedGpuMemory: uint64(6 * gib)}, {Pid: 400, UsedGpuMemory: uint64(2 * gib)}}
	fsys := procTree(map[uint32]procEntry{
		300: {"python3", "0::/system.slice/slurmstepd.scope/job_4749/step_0/user/task_0\n"},
		400: {"python3", "9:devices:/slurm/uid_2687/job_13759490/step_batch/task_0\n4:memory:/slurm/uid_2687/job_13759490/step_batch/task_0\n"},
	})
	r := startWith(t, newFakeNVML(g), fsys)

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	procs := byGPU(md)[g.uuid]["nvidia.gpu.process.memory.usage"]
	require.Len(t, procs, 2)
	for i, want := range []struct{ job, step string }{{"4749", "0"}, {"13759490", "batch"}} {
		assert.Equal(t, want.job, procs[i].attrs["slurm.job.id"], "pid %v", procs[i].attrs["process.pid"])
		assert.Equal(t, want.step, procs[i].attrs["slurm.job.step"], "pid %v", procs[i].attrs["process.pid"])
		assert.NotContains(t, procs[i].attrs, "container.id")
		assert.NotContains(t, procs[i].attrs, "k8s.pod.uid")
	}
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestResourceAttributes(t *testing.T) {
	g, noVBIOS := newFakeGPU(2), newFakeGPU(1)
	noVBIOS.vbios = ""
	r := startWith(t, newFakeNVML(newFakeGPU(0), noVBIOS, g), fstest.MapFS{})
	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, md.ResourceMetrics().Len())
	assert.Equal(t, map[string]any{
		"hw.id": g.uuid, "hw.type": "gpu", "hw.vendor": "nvidia", "hw.name": "GPU 2", "hw.model": "NVIDIA H100 80GB HBM3",
		"hw.driver_version": "570.86.15", "hw.firmware_version": "96.00.30.00.01", "hw.serial_number": "1323000000002",
		"nvidia.gpu.index": int64(2), "nvidia.gpu.pci.bus_id": "00000000:1A:00.0",
	}, md.ResourceMetrics().At(2).Resource().Attributes().AsRaw())
	assert.NotContains(t, md.ResourceMetrics().At(1).Resource().Attributes().AsRaw(), "hw.firmware_version",
		"no VBIOS version where NVML answers NOT_SUPPORTED")
}

// NOT_SUPPORTED is probed once and then never asked again; it is not an error.
func TestNotSupportedProbedOnce(t *testing.T) {
	g := newFakeGPU(0)
	g.memV2 = nvml.ERROR_NOT_SUPPORTED
	g.utilization = nvml.ERROR_NOT_SUPPORTED
	lib := newFakeNVML(g)
	r := startWith(t, lib, fstest.MapFS{})

	for i := 0; i < 3; i++ {
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		got := byGPU(md)[g.uuid]
		assert.Equal(t, float64(g.used+g.reserved), got["hw.gpu.memory.usage"][0].value, "v1 used = total - free")
		assert.NotContains(t, got, "nvidia.gpu.memory.reserved", "v1 has no reserve")
		assert.NotContains(t, got, "nvidia.gpu.memory.unattributed", "not meaningful without the reserve")
		assert.NotContains(t, got, "hw.gpu.utilization")
	}
	assert.Len(t, lib.devices[0].GetMemoryInfo_v2Calls(), 1)
	assert.Len(t, lib.devices[0].GetUtilizationRatesCalls(), 1)
	assert.Len(t, lib.devices[0].GetMemoryInfoCalls(), 3)
}

// Any other NVML error is a partial scrape error naming the GPU and the call; the other GPUs
// and the other calls on the same GPU go on.
func TestPartialScrapeError(t *testing.T) {
	bad, good := newFakeGPU(0), newFakeGPU(1)
	bad.memV2 = nvml.ERROR_UNKNOWN
	bad.processes = nvml.ERROR_UNKNOWN
	r := startWith(t, newFakeNVML(bad, good), fstest.MapFS{})

	md, err := r.scrapeMetrics(context.Background())
	require.Error(t, err)
	assert.True(t, scrapererror.IsPartialScrapeError(err))
	assert.Contains(t, err.Error(), "read memory info v2 of GPU "+bad.uuid)
	assert.Contains(t, err.Error(), "list compute processes of GPU "+bad.uuid)
	got := byGPU(md)
	assert.Contains(t, got[good.uuid], "hw.gpu.memory.usage")
	assert.NotContains(t, got[bad.uuid], "hw.gpu.memory.usage")
	assert.Contains(t, got[bad.uuid], "hw.gpu.utilization", "other calls on the failing GPU still report")
}

func TestUsedMemoryNotAvailable(t *testing.T) {
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 7, UsedGpuMemory: ^uint64(0)}}
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	got := byGPU(md)[g.uuid]
	assert.NotContains(t, got, "nvidia.gpu.process.memory.usage", "NVML_VALUE_NOT_AVAILABLE is not a size")
	assert.Equal(t, 1.0, got["nvidia.gpu.process.count"][0].value)
}

func TestMetricSwitches(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	cfg.Metrics["nvidia.gpu.process.memory.usage"] = metadata.MetricConfig{Enabled: false}
	cfg.Metrics["hw.gpu.utilization"] = metadata.MetricConfig{Enabled: false}
	cfg.ResourceAttributes["hw.serial_number"] = metadata.ResourceAttributeConfig{Enabled: false}
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 7, UsedGpuMemory: uint64(gib)}}
	lib := newFakeNVML(g)
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	r.newBackend = func(*Config) (node.Node, error) { return node.Node{Lib: lib, ProcFS: fstest.MapFS{}}, nil }
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	got := byGPU(md)[g.uuid]
	assert.NotContains(t, got, "nvidia.gpu.process.memory.usage")
	assert.NotContains(t, got, "hw.gpu.utilization")
	assert.Empty(t, lib.devices[0].GetUtilizationRatesCalls(), "a switched-off metric costs no NVML call")
	_, has := md.ResourceMetrics().At(0).Resource().Attributes().Get("hw.serial_number")
	assert.False(t, has)
}

package fakenvml

import (
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/dl"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// One library per process: go-nvml's cgo calls bind to the first library's symbols, so
// this test calls only into the full build; the variants are checked by their symbol
// tables.
func TestFullLibraryThroughGoNVML(t *testing.T) {
	dir := t.TempDir()
	lib := MustBuild(t, dir, Full)
	path := filepath.Join(dir, "scenario")
	scn := Scenario{}.Set("driver_version", "570.86.15").Set("gpu_count", 1).
		GPU(0, "uuid", "GPU-11111111-2222-3333-4444-555555555555").GPU(0, "name", "NVIDIA A100-SXM4-40GB").
		GPU(0, "serial", "1323456789012").GPU(0, "bus_id", "00000000:3B:00.0").
		GPU(0, "mem.total", 40<<30).GPU(0, "mem.free", 30<<30).GPU(0, "mem.used", 10<<30).
		GPU(0, "mem2.total", 40<<30).GPU(0, "mem2.reserved", 512<<20).GPU(0, "mem2.used", 9<<30).
		GPU(0, "procs.compute", "4242:1073741824 4343:2147483648").
		GPU(0, "util.gpu", 37).GPU(0, "remap", "2 1 1 0").GPU(0, "ecc.mode", 1).
		GPU(0, "ecc.corrected", 5).GPU(0, "ecc.uncorrected", 1).
		GPU(0, "mig.mode", 1).GPU(0, "mig.count", 7).GPU(0, "mig.2.uuid", "MIG-aaaa").GPU(0, "mig.2.gi", 5).GPU(0, "mig.2.ci", 0)
	require.NoError(t, scn.Write(path))
	t.Setenv(ScenarioEnv, path)

	l := nvml.New(nvml.WithLibraryPath(lib))
	require.Equal(t, nvml.SUCCESS, l.Init())
	defer l.Shutdown()
	v, r := l.SystemGetDriverVersion()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, "570.86.15", v)
	d, r := l.DeviceGetHandleByIndex(0)
	require.Equal(t, nvml.SUCCESS, r)
	uuid, _ := d.GetUUID()
	assert.Equal(t, "GPU-11111111-2222-3333-4444-555555555555", uuid)
	pci, r := d.GetPciInfo()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, int8('3'), pci.BusId[9])
	m2, r := d.GetMemoryInfo_v2()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, nvml.Memory_v2{Version: m2.Version, Total: 40 << 30, Reserved: 512 << 20, Used: 9 << 30, Free: 40<<30 - 512<<20 - 9<<30}, m2)
	m1, r := d.GetMemoryInfo()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, uint64(30<<30), m1.Free)
	procs, r := d.GetComputeRunningProcesses()
	require.Equal(t, nvml.SUCCESS, r)
	require.Len(t, procs, 2)
	assert.Equal(t, uint32(4343), procs[1].Pid)
	assert.Equal(t, uint64(2<<30), procs[1].UsedGpuMemory)
	_, r = d.GetGraphicsRunningProcesses()
	assert.Equal(t, nvml.SUCCESS, r, "no graphics key: an empty list")
	corr, unc, pending, failed, r := d.GetRemappedRows()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, []any{2, 1, true, false}, []any{corr, unc, pending, failed})
	_, r = d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, r, "a missing key answers NOT_SUPPORTED")
	n, r := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, uint64(5), n)
	mig, r := d.GetMigDeviceHandleByIndex(2)
	require.Equal(t, nvml.SUCCESS, r)
	gi, _ := mig.GetGpuInstanceId()
	assert.Equal(t, 5, gi)
	_, r = d.GetMigDeviceHandleByIndex(1)
	assert.Equal(t, nvml.ERROR_NOT_FOUND, r)

	// Events written after the set was created arrive; a rewrite of the scenario is seen.
	set, r := l.EventSetCreate()
	require.Equal(t, nvml.SUCCESS, r)
	require.Equal(t, nvml.SUCCESS, d.RegisterEvents(nvml.EventTypeXidCriticalError, set))
	_, r = set.Wait(10)
	assert.Equal(t, nvml.ERROR_TIMEOUT, r)
	require.NoError(t, scn.Set("xid.1", "0 79").GPU(0, "ret.all", int(nvml.ERROR_GPU_IS_LOST)).Write(path))
	ev, r := set.Wait(1000)
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, uint64(79), ev.EventData)
	assert.Equal(t, uint64(nvml.EventTypeXidCriticalError), ev.EventType)
	assert.Equal(t, uint32(0xFFFFFFFF), ev.GpuInstanceId, "not from a MIG instance")
	require.NoError(t, scn.Set("xid.2", "0 94 5 0").Write(path))
	ev, r = set.Wait(1000)
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, []uint64{94, 5, 0}, []uint64{ev.EventData, uint64(ev.GpuInstanceId), uint64(ev.ComputeInstanceId)}, "an Xid naming a MIG instance")
	_, r = d.GetMemoryInfo()
	assert.Equal(t, nvml.ERROR_GPU_IS_LOST, r)
	assert.Equal(t, "GPU is lost", r.Error(), "nvmlErrorString is the library's")
	require.Equal(t, nvml.SUCCESS, set.Free())
}

func TestVariantsLackTheirSymbols(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		v       Variant
		missing []string
	}{
		{Full, nil},
		{R470, []string{"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3"}},
		{R450, []string{"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses_v3"}},
		{NoRemap, []string{"nvmlDeviceGetRemappedRows"}},
		{NoMIG, []string{"nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount", "nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId", "nvmlDeviceGetGpuInstanceById", "nvmlGpuInstanceGetInfo"}},
		{NoProcessUtilization, []string{"nvmlDeviceGetProcessUtilization"}},
	} {
		lib := dl.New(MustBuild(t, dir, tc.v), dl.RTLD_LAZY|dl.RTLD_LOCAL)
		require.NoError(t, lib.Open(), tc.v.Name)
		for _, sym := range []string{"nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlDeviceGetMemoryInfo", "nvmlEventSetWait_v2"} {
			assert.NoError(t, lib.Lookup(sym), "%s exports %s", tc.v.Name, sym)
		}
		for _, sym := range tc.missing {
			assert.Error(t, lib.Lookup(sym), "%s lacks %s", tc.v.Name, sym)
		}
		if tc.v.Name == Full.Name {
			for _, sym := range []string{"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetRemappedRows", "nvmlDeviceGetMigMode", "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetMinorNumber", "nvmlDeviceGetGpuInstanceById", "nvmlGpuInstanceGetInfo"} {
				assert.NoError(t, lib.Lookup(sym), "full exports %s", sym)
			}
		}
		require.NoError(t, lib.Close())
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

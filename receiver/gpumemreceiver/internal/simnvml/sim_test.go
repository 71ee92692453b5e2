package simnvml

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const memScenario = `
duration: 60s
gpus:
  - memory_total: 10GiB
    reserved: 1GiB
    unattributed: 1GiB
    utilization: {ramp: {from: 0, to: 100, over: 10s}}
    processes:
      - {pid: 100, name: trainer, memory: {ramp: {from: 1GiB, to: 5GiB, over: 40s}}}
      - {pid: 200, name: Xorg, type: graphics, memory: 256MiB, start: 10s, stop: 30s}
      - {pid: 300, name: both, type: both, memory: 2GiB}
`

func TestMemoryRelations(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, memScenario), Options{})
	d := deviceAt(t, sim, 0)
	for _, at := range []time.Duration{0, 15 * time.Second, 40 * time.Second, 59 * time.Second} {
		clk.Set(at)
		v1, ret := d.GetMemoryInfo()
		require.Equal(t, nvml.SUCCESS, ret)
		v2, ret := d.GetMemoryInfo_v2()
		require.Equal(t, nvml.SUCCESS, ret)

		assert.Equal(t, v1.Total, v2.Total)
		assert.Equal(t, uint64(1<<30), v2.Reserved)
		assert.Equal(t, v2.Total, v2.Reserved+v2.Used+v2.Free, "v2: total = reserved + used + free at %s", at)
		assert.Equal(t, v1.Total-v1.Free, v1.Used, "v1: used = total - free at %s", at)
		assert.Equal(t, v2.Free, v1.Free)
		assert.Equal(t, v2.Used+v2.Reserved, v1.Used, "v1 used includes the reservation")
		assert.Equal(t, nvml.STRUCT_VERSION(nvml.Memory_v2{}, 2), v2.Version)

		// v2 used = unattributed + the processes' memory.
		var sum uint64
		seen := map[uint32]bool{}
		for _, list := range [][]nvml.ProcessInfo{mustProcs(t, d.GetComputeRunningProcesses), mustProcs(t, d.GetGraphicsRunningProcesses)} {
			for _, p := range list {
				if !seen[p.Pid] {
					sum += p.UsedGpuMemory
					seen[p.Pid] = true
				}
			}
		}
		assert.Equal(t, v2.Used, sum+1<<30, "at %s", at)
	}
}

func mustProcs(t *testing.T, f func() ([]nvml.ProcessInfo, nvml.Return)) []nvml.ProcessInfo {
	t.Helper()
	ps, ret := f()
	require.Equal(t, nvml.SUCCESS, ret)
	return ps
}

func pids(ps []nvml.ProcessInfo) []uint32 {
	var out []uint32
	for _, p := range ps {
		out = append(out, p.Pid)
		if p.GpuInstanceId != noInstance || p.ComputeInstanceId != noInstance {
			panic("non-MIG processes carry no instance ids")
		}
	}
	return out
}

func TestProcessesAppearAndExit(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, memScenario), Options{})
	d := deviceAt(t, sim, 0)

	clk.Set(5 * time.Second)
	assert.Equal(t, []uint32{100, 300}, pids(mustProcs(t, d.GetComputeRunningProcesses)))
	assert.Equal(t, []uint32{300}, pids(mustProcs(t, d.GetGraphicsRunningProcesses)))

	clk.Set(10 * time.Second)
	assert.Equal(t, []uint32{200, 300}, pids(mustProcs(t, d.GetGraphicsRunningProcesses)))

	clk.Set(30 * time.Second) // stop is exclusive
	assert.Equal(t, []uint32{300}, pids(mustProcs(t, d.GetGraphicsRunningProcesses)))

	clk.Set(70 * time.Second) // the loop brings it back at scenario time 10 s
	assert.Equal(t, []uint32{200, 300}, pids(mustProcs(t, d.GetGraphicsRunningProcesses)))

	clk.Set(20 * time.Second)
	ps := mustProcs(t, d.GetComputeRunningProcesses)
	assert.Equal(t, uint64(3<<30), ps[0].UsedGpuMemory, "ramp 1→5 GiB over 40 s is 3 GiB at 20 s")
}

func TestMemoryClampsToCapacity(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, `
gpus:
  - memory_total: 4GiB
    reserved: 1GiB
    unattributed: 1GiB
    processes:
      - {pid: 1, name: a, memory: 1536MiB}
      - {pid: 2, name: b, memory: 4GiB}
`), Options{})
	d := deviceAt(t, sim, 0)
	v2, _ := d.GetMemoryInfo_v2()
	assert.Equal(t, uint64(0), v2.Free)
	assert.Equal(t, uint64(3<<30), v2.Used)
	ps := mustProcs(t, d.GetComputeRunningProcesses)
	assert.Equal(t, uint64(1536<<20), ps[0].UsedGpuMemory)
	assert.Equal(t, uint64(512<<20), ps[1].UsedGpuMemory, "the last process gets only what is left")
}

func TestDeviceIdentity(t *testing.T) {
	sim, _ := newTestSim(t, BuiltinScenario(), Options{})
	n, ret := sim.DeviceGetCount()
	require.Equal(t, nvml.SUCCESS, ret)
	require.Equal(t, 8, n)

	d := deviceAt(t, sim, 2)
	uuid, _ := d.GetUUID()
	name, _ := d.GetName()
	serial, _ := d.GetSerial()
	idx, _ := d.GetIndex()
	pci, _ := d.GetPciInfo()
	assert.Equal(t, sim.Scenario().GPUs[2].UUID, uuid)
	assert.Equal(t, "NVIDIA H100 80GB HBM3", name)
	assert.NotEmpty(t, serial)
	assert.Equal(t, 2, idx)
	assert.Equal(t, "00000000:3A:00.0", cString(pci.BusId[:]))
	assert.Equal(t, "0000:3A:00.0", cString(pci.BusIdLegacy[:]))
	assert.Equal(t, uint32(0x3a), pci.Bus)

	byUUID, ret := sim.DeviceGetHandleByUUID(uuid)
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Same(t, d, byUUID)
	byBus, ret := sim.DeviceGetHandleByPciBusId("0000:3a:00.0")
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Same(t, d, byBus)

	_, ret = sim.DeviceGetHandleByIndex(8)
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, ret)
	_, ret = sim.DeviceGetHandleByUUID("GPU-nope")
	assert.Equal(t, nvml.ERROR_NOT_FOUND, ret)

	v, _ := sim.SystemGetDriverVersion()
	assert.Equal(t, DefaultDriverVersion, v)
	v, _ = sim.SystemGetNVMLVersion()
	assert.Equal(t, "12."+DefaultDriverVersion, v)
	assert.Equal(t, "ERROR_NOT_SUPPORTED", sim.ErrorString(nvml.ERROR_NOT_SUPPORTED))
	mode, pending, ret := d.GetMigMode()
	assert.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, []int{nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE}, []int{mode, pending})
}

func cString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

func TestInitShutdownGate(t *testing.T) {
	sim, err := New(parse(t, "gpus: [{}]"), Options{})
	require.NoError(t, err)
	_, ret := sim.DeviceGetCount()
	assert.Equal(t, nvml.ERROR_UNINITIALIZED, ret, "calls before Init fail")
	require.Equal(t, nvml.SUCCESS, sim.Init())
	d := deviceAt(t, sim, 0)
	require.Equal(t, nvml.SUCCESS, sim.Init())
	require.Equal(t, nvml.SUCCESS, sim.Shutdown())
	_, ret = d.GetMemoryInfo()
	assert.Equal(t, nvml.SUCCESS, ret, "NVML counts Init calls")
	require.Equal(t, nvml.SUCCESS, sim.Shutdown())
	_, ret = d.GetMemoryInfo()
	assert.Equal(t, nvml.ERROR_UNINITIALIZED, ret)
	assert.Equal(t, nvml.ERROR_UNINITIALIZED, sim.Shutdown())

	failing, err := New(parse(t, "gpus: [{}]"), Options{InitReturn: nvml.ERROR_LIBRARY_NOT_FOUND})
	require.NoError(t, err)
	assert.Equal(t, nvml.ERROR_LIBRARY_NOT_FOUND, failing.Init())
	_, ret = failing.DeviceGetCount()
	assert.Equal(t, nvml.ERROR_UNINITIALIZED, ret)
}

func TestSupportsSwitchesFeaturesOff(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, `
gpus:
  - supports: {memory_info_v2: false, utilization: false, retired_pages: false, remapped_rows: false,
               ecc: false, mig: false, events: false, serial: false}
`), Options{})
	d := deviceAt(t, sim, 0)
	_, ret := d.GetMemoryInfo()
	assert.Equal(t, nvml.SUCCESS, ret, "v1 memory info is always there")
	notSupported := map[string]nvml.Return{}
	_, notSupported["memory_info_v2"] = d.GetMemoryInfo_v2()
	_, notSupported["utilization"] = d.GetUtilizationRates()
	_, notSupported["retired_pages"] = d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
	_, _, notSupported["retired_pages_v2"] = d.GetRetiredPages_v2(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
	_, notSupported["retired_pending"] = d.GetRetiredPagesPendingStatus()
	_, _, _, _, notSupported["remapped_rows"] = d.GetRemappedRows()
	_, _, notSupported["ecc_mode"] = d.GetEccMode()
	_, notSupported["ecc_errors"] = d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
	_, _, notSupported["mig"] = d.GetMigMode()
	_, notSupported["events"] = d.GetSupportedEventTypes()
	_, notSupported["serial"] = d.GetSerial()
	for k, ret := range notSupported {
		assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, ret, k)
	}
}

func TestUnmodelledCallsAreNotSupported(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, "gpus: [{}]"), Options{})
	d := deviceAt(t, sim, 0)
	_, ret := d.GetTemperature(nvml.TEMPERATURE_GPU)
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, ret)
	_, ret = d.GetClockInfo(nvml.CLOCK_SM)
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, ret)
	_, ret = sim.GetExcludedDeviceCount()
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, ret)
	assert.Nil(t, sim.Extensions())
	// Interface forms answer like the device methods.
	m1, _ := sim.DeviceGetMemoryInfo(d)
	m2, _ := d.GetMemoryInfo()
	assert.Equal(t, m1, m2)
	_, ret = sim.DeviceGetMemoryInfo(nil)
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, ret)
}

func TestECCAndRetirement(t *testing.T) {
	sim, clk := newTestSim(t, BuiltinScenario(), Options{})
	d := deviceAt(t, sim, 6)

	clk.Set(10 * time.Second)
	sbe, ret := d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Len(t, sbe, 2)
	dbe, stamps, ret := d.GetRetiredPages_v2(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Empty(t, dbe)
	assert.Empty(t, stamps)
	pending, _ := d.GetRetiredPagesPendingStatus()
	assert.Equal(t, nvml.FEATURE_DISABLED, pending)

	clk.Set(30 * time.Second)
	dbe, stamps, _ = d.GetRetiredPages_v2(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
	assert.Len(t, dbe, 1)
	assert.Equal(t, []uint64{uint64(epoch.Unix())}, stamps)
	assert.NotEqual(t, sbe[0], dbe[0])
	pending, _ = d.GetRetiredPagesPendingStatus()
	assert.Equal(t, nvml.FEATURE_ENABLED, pending)
	_, ret = d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_COUNT)
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, ret)

	cur, pend, ret := d.GetEccMode()
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, nvml.FEATURE_ENABLED, cur)
	assert.Equal(t, nvml.FEATURE_ENABLED, pend)

	// Corrected errors ramp 0→12 over the 60 s loop and keep counting across loops.
	for _, c := range []struct {
		at   time.Duration
		want uint64
	}{{0, 0}, {30 * time.Second, 6}, {60 * time.Second, 12}, {90 * time.Second, 18}, {150 * time.Second, 30}} {
		clk.Set(c.at)
		n, ret := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
		require.Equal(t, nvml.SUCCESS, ret)
		assert.Equal(t, c.want, n, "at %s", c.at)
	}
	_, ret = d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_COUNT, nvml.VOLATILE_ECC)
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, ret)
	u, _ := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC)
	assert.Equal(t, uint64(3), u, "one per loop at 150 s: loops 0, 1 and now 2 past 30 s")

	corr, unc, pend2, failed, ret := deviceAt(t, sim, 0).GetRemappedRows()
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, []any{0, 0, false, false}, []any{corr, unc, pend2, failed})
}

func TestEccOffHasNoCounters(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, "gpus: [{ecc_mode: false}]"), Options{})
	d := deviceAt(t, sim, 0)
	cur, _, ret := d.GetEccMode()
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, nvml.FEATURE_DISABLED, cur)
	_, ret = d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, ret)
}

func TestUtilization(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, memScenario), Options{})
	clk.Set(5 * time.Second)
	u, ret := deviceAt(t, sim, 0).GetUtilizationRates()
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, uint32(50), u.Gpu)
}

func TestNewRejectsBadScenario(t *testing.T) {
	_, err := New(nil, Options{})
	assert.Error(t, err)
	_, err = New(&Scenario{}, Options{})
	assert.ErrorContains(t, err, "gpus")
}

func TestBuiltinStory(t *testing.T) {
	sim, clk := newTestSim(t, BuiltinScenario(), Options{})
	// GPU 3 leaks until it is nearly full at 50 s.
	clk.Set(50 * time.Second)
	v2, _ := deviceAt(t, sim, 3).GetMemoryInfo_v2()
	assert.Less(t, v2.Free, uint64(2<<30))
	assert.Equal(t, uint64(1175<<20), v2.Free, "1.15 GiB free, as the OOM message says")
	clk.Set(55 * time.Second)
	assert.Empty(t, mustProcs(t, deviceAt(t, sim, 3).GetComputeRunningProcesses), "the leaking process died")
	// GPU 5 holds 6 GiB no process explains.
	v2, _ = deviceAt(t, sim, 5).GetMemoryInfo_v2()
	var sum uint64
	for _, p := range mustProcs(t, deviceAt(t, sim, 5).GetComputeRunningProcesses) {
		sum += p.UsedGpuMemory
	}
	assert.Equal(t, uint64(6<<30), v2.Used-sum)
}

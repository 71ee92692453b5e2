package simnvml

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// migScenario: GPU 0 goes into MIG mode at 10 s with two instances; a third is created at
// 20 s and the first destroyed at 30 s. GPU 1 has no MIG key.
const migScenario = `
duration: 60s
gpus:
  - name: NVIDIA A100-SXM4-40GB
    memory_total: 40GiB
    reserved: 512MiB
    unattributed: 256MiB
    mig:
      enabled: {steps: [{at: 10s, value: true}]}
      instances:
        - profile: 3g.20gb
          uuid: MIG-aaaa
          gpu_instance_id: 1
          stop: 30s
          unattributed: 1GiB
          processes:
            - {pid: 100, name: trainer, memory: 8GiB}
        - profile: 1g.5gb
          gpu_instance_id: 7
          compute_instance_id: 0
          processes:
            - {pid: 200, name: infer, memory: 2GiB, vpid: 4}
            - {pid: 201, name: viz, type: graphics, memory: 100MiB}
        - profile: 2g.10gb
          gpu_instance_id: 5
          start: 20s
    processes:
      - {pid: 300, name: whole, memory: 30GiB}
  - {}
`

func TestMIGMode(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, migScenario), Options{})
	d := deviceAt(t, sim, 0)

	cur, pend, r := d.GetMigMode()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, nvml.DEVICE_MIG_DISABLE, cur, "MIG off before 10 s")
	assert.Equal(t, nvml.DEVICE_MIG_DISABLE, pend)
	n, r := d.GetMaxMigDeviceCount()
	assert.Equal(t, nvml.SUCCESS, r)
	assert.Zero(t, n, "no MIG devices outside MIG mode")
	assert.Equal(t, []uint32{300}, pids(mustProcs(t, d.GetComputeRunningProcesses)), "outside MIG mode, no instance ids")
	_, r = d.GetUtilizationRates()
	assert.Equal(t, nvml.SUCCESS, r)

	clk.Set(15 * time.Second)
	cur, _, _ = d.GetMigMode()
	assert.Equal(t, nvml.DEVICE_MIG_ENABLE, cur)
	n, _ = d.GetMaxMigDeviceCount()
	assert.Equal(t, 7, n)
	_, r = d.GetUtilizationRates()
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, r, "no utilization in MIG mode")

	// The GPU's lists are the instances' processes, with their ids.
	procs := mustProcs(t, d.GetComputeRunningProcesses)
	require.Len(t, procs, 2)
	assert.Equal(t, nvml.ProcessInfo{Pid: 100, UsedGpuMemory: 8 << 30, GpuInstanceId: 1, ComputeInstanceId: 0}, procs[0])
	assert.Equal(t, nvml.ProcessInfo{Pid: 200, UsedGpuMemory: 2 << 30, GpuInstanceId: 7, ComputeInstanceId: 0}, procs[1])

	m0, r := d.GetMigDeviceHandleByIndex(0)
	require.Equal(t, nvml.SUCCESS, r)
	m1, r := d.GetMigDeviceHandleByIndex(1)
	require.Equal(t, nvml.SUCCESS, r)
	_, r = d.GetMigDeviceHandleByIndex(2)
	assert.Equal(t, nvml.ERROR_NOT_FOUND, r, "instance 2 is created at 20 s")
	_, r = d.GetMigDeviceHandleByIndex(7)
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, r)

	uuid, _ := m0.GetUUID()
	assert.Equal(t, "MIG-aaaa", uuid)
	uuid, _ = m1.GetUUID()
	assert.Regexp(t, `^MIG-[0-9a-f]{8}-`, uuid, "a derived UUID")
	name, _ := m1.GetName()
	assert.Equal(t, "NVIDIA A100-SXM4-40GB MIG 1g.5gb", name)
	gi, _ := m1.GetGpuInstanceId()
	ci, _ := m1.GetComputeInstanceId()
	assert.Equal(t, [2]int{7, 0}, [2]int{gi, ci})
	isMIG, _ := m1.IsMigDeviceHandle()
	assert.True(t, isMIG)
	parent, _ := m1.GetDeviceHandleFromMigDeviceHandle()
	assert.Same(t, d, parent)

	// Instance memory: its own total, used = unattributed + processes.
	mem, r := m0.GetMemoryInfo_v2()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, uint64(975*20*(1<<30)/1000/(1<<20)*(1<<20)), mem.Total, "3g.20gb: 97.5% of 20 GiB")
	assert.Equal(t, uint64(9<<30), mem.Used)
	assert.Equal(t, mem.Total, mem.Used+mem.Free)
	assert.Equal(t, []uint32{201}, migPIDs(mustProcs(t, m1.GetGraphicsRunningProcesses)))

	// The GPU's memory is its unattributed plus every instance's used.
	v2, _ := d.GetMemoryInfo_v2()
	m1mem, _ := m1.GetMemoryInfo_v2()
	assert.Equal(t, uint64(256<<20)+mem.Used+m1mem.Used, v2.Used)
	assert.Equal(t, v2.Total, v2.Reserved+v2.Used+v2.Free)

	// A reconfiguration: instance 2 appears at 20 s, instance 0 is destroyed at 30 s and
	// its handle goes stale.
	clk.Set(25 * time.Second)
	_, r = d.GetMigDeviceHandleByIndex(2)
	assert.Equal(t, nvml.SUCCESS, r)
	clk.Set(35 * time.Second)
	_, r = d.GetMigDeviceHandleByIndex(0)
	assert.Equal(t, nvml.ERROR_NOT_FOUND, r)
	_, r = m0.GetMemoryInfo_v2()
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, r, "a destroyed instance's handle")
	_, r = m0.GetUUID()
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, r)
	assert.Equal(t, []uint32{200}, migPIDs(mustProcs(t, d.GetComputeRunningProcesses)))

	// GPU 1 has no MIG configuration: mode disabled.
	cur, _, r = deviceAt(t, sim, 1).GetMigMode()
	assert.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, nvml.DEVICE_MIG_DISABLE, cur)
}

func TestMIGProcFSFollowsMode(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, migScenario), Options{})
	fsys := sim.ProcFS()
	exists := func(pid string) bool {
		_, err := fsys.Open(pid + "/comm")
		return err == nil
	}
	assert.True(t, exists("300"), "whole-GPU process before MIG mode")
	assert.False(t, exists("200"))
	clk.Set(15 * time.Second)
	assert.False(t, exists("300"), "gone once the GPU is split")
	assert.True(t, exists("200"))
	assert.True(t, exists("100"))
	clk.Set(35 * time.Second)
	assert.False(t, exists("100"), "its instance was destroyed")
	status, err := fsys.Open("200/status")
	require.NoError(t, err)
	defer status.Close()
	buf := make([]byte, 512)
	n, _ := status.Read(buf)
	assert.Contains(t, string(buf[:n]), "NSpid:\t200\t4\n")
}

func TestMIGSupportOff(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, "gpus: [{supports: {mig: false}, mig: {instances: [{profile: 1g.10gb}]}}]"), Options{})
	d := deviceAt(t, sim, 0)
	_, _, r := d.GetMigMode()
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, r)
	n, _ := d.GetMaxMigDeviceCount()
	assert.Zero(t, n)
}

// migPIDs lists the pids of processes listed in MIG mode.
func migPIDs(ps []nvml.ProcessInfo) []uint32 {
	out := make([]uint32, len(ps))
	for i, p := range ps {
		out[i] = p.Pid
	}
	return out
}

package simnvml

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Memory follows memory info v2's accounting, which NVML defines as:
// total = reserved + used + free, where used excludes the reservation.
// Memory info v1 folds the reservation into used: used = total − free.
//
// used (v2) is the unattributed memory plus every live process's memory,
// each clamped in scenario order to what is still free, so the numbers add up
// even when a scenario asks for more than the GPU has.

// usedV2 is the memory in use at scenario time t, excluding the reservation.
func (d *device) usedV2(t time.Duration) uint64 {
	room := uint64(d.gpu.MemoryTotal) - uint64(*d.gpu.Reserved)
	used := min(toUint(d.gpu.Unattributed.At(t)), room)
	for i := range d.gpu.Processes {
		p := &d.gpu.Processes[i]
		if alive(p, t) {
			used += min(toUint(p.Memory.At(t)), room-used)
		}
	}
	return used
}

func (d *device) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	if !d.sim.up() {
		return nvml.Memory{}, nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	total := uint64(d.gpu.MemoryTotal)
	free := total - uint64(*d.gpu.Reserved) - d.usedV2(t)
	return nvml.Memory{Total: total, Free: free, Used: total - free}, nvml.SUCCESS
}

func (d *device) GetMemoryInfo_v2() (nvml.Memory_v2, nvml.Return) {
	if !d.sim.up() {
		return nvml.Memory_v2{}, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.memoryInfoV2 {
		return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED
	}
	t, _ := d.now()
	total, reserved := uint64(d.gpu.MemoryTotal), uint64(*d.gpu.Reserved)
	used := d.usedV2(t)
	return nvml.Memory_v2{
		Version: memoryV2Version, Total: total, Reserved: reserved,
		Used: used, Free: total - reserved - used,
	}, nvml.SUCCESS
}

func (d *device) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	return d.processes(TypeGraphics)
}

func (d *device) GetGraphicsRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	return d.processes(TypeCompute)
}

// processes lists the live processes at the current time, leaving out those
// of type exclude; memory is clamped exactly as usedV2 clamps it.
func (d *device) processes(exclude string) ([]nvml.ProcessInfo, nvml.Return) {
	if !d.sim.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	room := uint64(d.gpu.MemoryTotal) - uint64(*d.gpu.Reserved)
	used := min(toUint(d.gpu.Unattributed.At(t)), room)
	var out []nvml.ProcessInfo
	for i := range d.gpu.Processes {
		p := &d.gpu.Processes[i]
		if !alive(p, t) {
			continue
		}
		mem := min(toUint(p.Memory.At(t)), room-used)
		used += mem
		if p.Type == exclude {
			continue
		}
		if out == nil {
			out = make([]nvml.ProcessInfo, 0, len(d.gpu.Processes))
		}
		out = append(out, nvml.ProcessInfo{
			Pid: p.PID, UsedGpuMemory: mem,
			GpuInstanceId: noInstance, ComputeInstanceId: noInstance,
		})
	}
	return out, nvml.SUCCESS
}

// alive reports whether p is running at scenario time t.
func alive(p *Process, t time.Duration) bool {
	return t >= p.Start && (p.Stop == 0 || t < p.Stop)
}

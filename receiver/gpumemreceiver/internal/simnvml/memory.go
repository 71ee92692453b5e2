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
// even when a scenario asks for more than the GPU has. In MIG mode a GPU's
// used is its own unattributed memory plus each live instance's used, and
// each instance accounts for its processes the same way within its own total.

// pool is framebuffer that processes share: a whole GPU or one MIG instance.
type pool struct {
	room         uint64 // what unattributed memory and processes may use
	unattributed Series
	procs        []Process
	gi, ci       uint32 // GPU and compute instance ids; noInstance outside MIG
}

// wholePool is the GPU outside MIG mode.
func (d *device) wholePool() pool {
	return pool{
		room:         uint64(d.gpu.MemoryTotal) - uint64(*d.gpu.Reserved),
		unattributed: d.gpu.Unattributed, procs: d.gpu.Processes,
		gi: noInstance, ci: noInstance,
	}
}

// used is the memory in use at scenario time t.
func (p pool) used(t time.Duration) uint64 {
	used := min(toUint(p.unattributed.At(t)), p.room)
	for i := range p.procs {
		if pr := &p.procs[i]; alive(pr, t) {
			used += min(toUint(pr.Memory.At(t)), p.room-used)
		}
	}
	return used
}

// appendProcesses appends the live processes at t, leaving out those of type
// exclude; memory is clamped exactly as used clamps it.
func (p pool) appendProcesses(out []nvml.ProcessInfo, t time.Duration, exclude string) []nvml.ProcessInfo {
	used := min(toUint(p.unattributed.At(t)), p.room)
	for i := range p.procs {
		pr := &p.procs[i]
		if !alive(pr, t) {
			continue
		}
		mem := min(toUint(pr.Memory.At(t)), p.room-used)
		used += mem
		if pr.Type == exclude {
			continue
		}
		if out == nil {
			out = make([]nvml.ProcessInfo, 0, len(p.procs))
		}
		out = append(out, nvml.ProcessInfo{Pid: pr.PID, UsedGpuMemory: mem, GpuInstanceId: p.gi, ComputeInstanceId: p.ci})
	}
	return out
}

// usedV2 is the GPU's memory in use at scenario time t, excluding the reservation.
func (d *device) usedV2(t time.Duration) uint64 {
	if !d.migOn(t) {
		return d.wholePool().used(t)
	}
	room := uint64(d.gpu.MemoryTotal) - uint64(*d.gpu.Reserved)
	used := min(toUint(d.gpu.Unattributed.At(t)), room)
	for _, m := range d.migs {
		if m.inst.live(t) {
			used += min(m.pool().used(t), room-used)
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
	if w := d.garbageAt(t); w != nil {
		m := w.apply(nvml.Memory_v2{Total: total, Free: free})
		total, free = m.Total, m.Free
	}
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
	m := nvml.Memory_v2{
		Version: memoryV2Version, Total: total, Reserved: reserved,
		Used: used, Free: total - reserved - used,
	}
	if w := d.garbageAt(t); w != nil {
		m = w.apply(m)
	}
	return m, nvml.SUCCESS
}

func (d *device) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	return d.processes(TypeGraphics)
}

func (d *device) GetGraphicsRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	return d.processes(TypeCompute)
}

// processes lists the live processes at the current time, leaving out those
// of type exclude. In MIG mode that is every live instance's processes, with
// their instance ids, as NVML answers a privileged caller on the GPU's handle.
func (d *device) processes(exclude string) ([]nvml.ProcessInfo, nvml.Return) {
	if !d.sim.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	if w := d.garbageAt(t); w != nil && w.Processes != nil {
		return w.garbageProcesses(exclude), nvml.SUCCESS
	}
	if !d.migOn(t) {
		return d.wholePool().appendProcesses(nil, t, exclude), nvml.SUCCESS
	}
	var out []nvml.ProcessInfo
	for _, m := range d.migs {
		if m.inst.live(t) {
			out = m.pool().appendProcesses(out, t, exclude)
		}
	}
	return out, nvml.SUCCESS
}

// alive reports whether p is running at scenario time t.
func alive(p *Process, t time.Duration) bool {
	return t >= p.Start && (p.Stop == 0 || t < p.Stop)
}

package simnvml

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// maxMIGDevices is what GetMaxMigDeviceCount answers in MIG mode: an A100 or H100 holds at
// most 7 MIG devices. A scenario that lists more (layouts over time) gets one index each.
const maxMIGDevices = 7

// migOn reports whether the GPU is in MIG mode at scenario time t.
func (d *device) migOn(t time.Duration) bool {
	return d.has.mig && d.gpu.MIG != nil && d.gpu.MIG.Enabled.At(t) >= 0.5
}

// GetMigMode answers the scenario's MIG mode (current and pending alike);
// disabled for a GPU without a mig key.
func (d *device) GetMigMode() (int, int, nvml.Return) {
	if !d.sim.up() {
		return 0, 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.mig {
		return 0, 0, nvml.ERROR_NOT_SUPPORTED
	}
	t, _ := d.now()
	if d.migOn(t) {
		return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
	}
	return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS
}

// GetMaxMigDeviceCount is 0 outside MIG mode, as NVML documents.
func (d *device) GetMaxMigDeviceCount() (int, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	if !d.migOn(t) {
		return 0, nvml.SUCCESS
	}
	return max(maxMIGDevices, len(d.migs)), nvml.SUCCESS
}

// GetMigDeviceHandleByIndex returns the instance at its position in the scenario's list;
// NOT_FOUND where that instance does not exist now.
func (d *device) GetMigDeviceHandleByIndex(i int) (nvml.Device, nvml.Return) {
	n, r := d.GetMaxMigDeviceCount()
	if r != nvml.SUCCESS {
		return nil, r
	}
	if i < 0 || i >= n {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	t, _ := d.now()
	if i >= len(d.migs) || !d.migs[i].inst.live(t) {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return d.migs[i], nvml.SUCCESS
}

func (d *device) IsMigDeviceHandle() (bool, nvml.Return) {
	if !d.sim.up() {
		return false, nvml.ERROR_UNINITIALIZED
	}
	return false, nvml.SUCCESS
}

// GetGpuInstanceById answers for a live instance's GPU instance: its profile id and
// placement where the scenario gives them, NO_PERMISSION where it does not (the call needs
// a privileged user, nvml.h).
func (d *device) GetGpuInstanceById(id int) (nvml.GpuInstance, nvml.Return) {
	if !d.sim.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	if !d.has.mig || !d.migOn(t) {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	for _, m := range d.migs {
		inst := m.inst
		if *inst.GPUInstanceID != id || !inst.live(t) {
			continue
		}
		if inst.ProfileID == nil {
			return nil, nvml.ERROR_NO_PERMISSION
		}
		info := nvml.GpuInstanceInfo{
			Id: uint32(id), ProfileId: uint32(*inst.ProfileID),
			Placement: nvml.GpuInstancePlacement{Start: uint32(*inst.PlacementStart), Size: 1},
		}
		gi := &mock.GpuInstance{GetInfoFunc: func() (nvml.GpuInstanceInfo, nvml.Return) { return info, nvml.SUCCESS }}
		fillNotSupported(gi)
		return gi, nvml.SUCCESS
	}
	return nil, nvml.ERROR_NOT_FOUND
}

// migDevice is one simulated MIG device. Its handle stays valid while its
// instance exists and the GPU is in MIG mode; after that every call answers
// INVALID_ARGUMENT, as a destroyed instance's handle does.
type migDevice struct {
	*mock.Device
	parent *device
	inst   *MIGInstance
	index  int
	name   string
}

var _ nvml.Device = (*migDevice)(nil)

func newMIGDevice(parent *device, inst *MIGInstance, index int) *migDevice {
	m := &migDevice{Device: &mock.Device{}, parent: parent, inst: inst, index: index,
		name: parent.gpu.Name + " MIG " + inst.Profile}
	fillNotSupported(m.Device)
	return m
}

// check says whether the handle may be used now.
func (m *migDevice) check() (time.Duration, nvml.Return) {
	if !m.parent.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	t, _ := m.parent.now()
	if !m.parent.migOn(t) || !m.inst.live(t) {
		return t, nvml.ERROR_INVALID_ARGUMENT
	}
	return t, nvml.SUCCESS
}

func (m *migDevice) pool() pool {
	return pool{
		room: uint64(m.inst.MemoryTotal), unattributed: m.inst.Unattributed, procs: m.inst.Processes,
		gi: uint32(*m.inst.GPUInstanceID), ci: uint32(m.inst.ComputeInstanceID),
	}
}

func (m *migDevice) GetUUID() (string, nvml.Return) {
	if _, r := m.check(); r != nvml.SUCCESS {
		return "", r
	}
	return m.inst.UUID, nvml.SUCCESS
}

// GetName answers what NVML names a MIG device: the GPU's name, "MIG", the profile.
func (m *migDevice) GetName() (string, nvml.Return) {
	if _, r := m.check(); r != nvml.SUCCESS {
		return "", r
	}
	return m.name, nvml.SUCCESS
}

// GetIndex is the MIG device index, the one GetMigDeviceHandleByIndex takes.
func (m *migDevice) GetIndex() (int, nvml.Return) {
	if _, r := m.check(); r != nvml.SUCCESS {
		return 0, r
	}
	return m.index, nvml.SUCCESS
}

func (m *migDevice) GetGpuInstanceId() (int, nvml.Return) {
	if _, r := m.check(); r != nvml.SUCCESS {
		return 0, r
	}
	return *m.inst.GPUInstanceID, nvml.SUCCESS
}

func (m *migDevice) GetComputeInstanceId() (int, nvml.Return) {
	if _, r := m.check(); r != nvml.SUCCESS {
		return 0, r
	}
	return m.inst.ComputeInstanceID, nvml.SUCCESS
}

func (m *migDevice) IsMigDeviceHandle() (bool, nvml.Return) {
	if _, r := m.check(); r != nvml.SUCCESS {
		return false, r
	}
	return true, nvml.SUCCESS
}

func (m *migDevice) GetDeviceHandleFromMigDeviceHandle() (nvml.Device, nvml.Return) {
	if _, r := m.check(); r != nvml.SUCCESS {
		return nil, r
	}
	return m.parent, nvml.SUCCESS
}

// GetMemoryInfo is the instance's memory: no reservation of its own.
func (m *migDevice) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	t, r := m.check()
	if r != nvml.SUCCESS {
		return nvml.Memory{}, r
	}
	total, used := uint64(m.inst.MemoryTotal), m.pool().used(t)
	return nvml.Memory{Total: total, Free: total - used, Used: used}, nvml.SUCCESS
}

func (m *migDevice) GetMemoryInfo_v2() (nvml.Memory_v2, nvml.Return) {
	t, r := m.check()
	if r != nvml.SUCCESS {
		return nvml.Memory_v2{}, r
	}
	if !m.parent.has.memoryInfoV2 {
		return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED
	}
	total, used := uint64(m.inst.MemoryTotal), m.pool().used(t)
	return nvml.Memory_v2{Version: memoryV2Version, Total: total, Used: used, Free: total - used}, nvml.SUCCESS
}

func (m *migDevice) GetComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	t, r := m.check()
	if r != nvml.SUCCESS {
		return nil, r
	}
	return m.pool().appendProcesses(nil, t, TypeGraphics), nvml.SUCCESS
}

func (m *migDevice) GetGraphicsRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	t, r := m.check()
	if r != nvml.SUCCESS {
		return nil, r
	}
	return m.pool().appendProcesses(nil, t, TypeCompute), nvml.SUCCESS
}

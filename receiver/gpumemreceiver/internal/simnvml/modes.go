package simnvml

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Compute modes a scenario may give a GPU.
const (
	ComputeModeDefault          = "default"
	ComputeModeExclusiveProcess = "exclusive_process"
	ComputeModeProhibited       = "prohibited"
)

var computeModes = map[string]nvml.ComputeMode{
	ComputeModeDefault:          nvml.COMPUTEMODE_DEFAULT,
	ComputeModeExclusiveProcess: nvml.COMPUTEMODE_EXCLUSIVE_PROCESS,
	ComputeModeProhibited:       nvml.COMPUTEMODE_PROHIBITED,
}

func (d *device) GetPersistenceMode() (nvml.EnableState, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.persistenceMode {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return enableState(*d.gpu.PersistenceMode), nvml.SUCCESS
}

func (d *device) GetComputeMode() (nvml.ComputeMode, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.computeMode {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return computeModes[d.gpu.ComputeMode], nvml.SUCCESS
}

// GetProcessUtilization answers as nvmlDeviceGetProcessUtilization: one sample
// per live process with non-zero utilization, stamped now (µs since the
// epoch), none when lastSeen is not older than now (NOT_FOUND), and
// NOT_SUPPORTED in MIG mode.
func (d *device) GetProcessUtilization(lastSeen uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
	if !d.sim.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	if !d.has.processUtilization || d.migOn(t) {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	stamp := uint64(d.sim.now().UnixMicro())
	if stamp <= lastSeen {
		return nil, nvml.ERROR_NOT_FOUND
	}
	var out []nvml.ProcessUtilizationSample
	for i := range d.gpu.Processes {
		if p := &d.gpu.Processes[i]; alive(p, t) {
			if s := sample(p, t, stamp); s.SmUtil > 0 || s.MemUtil > 0 {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return out, nvml.SUCCESS
}

func sample(p *Process, t time.Duration, stamp uint64) nvml.ProcessUtilizationSample {
	return nvml.ProcessUtilizationSample{
		Pid: p.PID, TimeStamp: stamp,
		SmUtil: uint32(toUint(p.SMUtilization.At(t))), MemUtil: uint32(toUint(p.MemoryUtilization.At(t))),
	}
}

func (s *Sim) DeviceGetPersistenceMode(d nvml.Device) (nvml.EnableState, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetPersistenceMode()
}

func (s *Sim) DeviceGetComputeMode(d nvml.Device) (nvml.ComputeMode, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetComputeMode()
}

func (s *Sim) DeviceGetProcessUtilization(d nvml.Device, lastSeen uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
	if d == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetProcessUtilization(lastSeen)
}

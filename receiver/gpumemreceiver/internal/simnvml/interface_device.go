package simnvml

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// The nvml.Interface forms of the device calls (nvml.DeviceGetX(dev)) answer
// exactly what the device methods answer. They are implemented here rather
// than through the mock so they do not record calls.

func (s *Sim) DeviceGetUUID(d nvml.Device) (string, nvml.Return) {
	if d == nil {
		return "", nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetUUID()
}

func (s *Sim) DeviceGetName(d nvml.Device) (string, nvml.Return) {
	if d == nil {
		return "", nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetName()
}

func (s *Sim) DeviceGetSerial(d nvml.Device) (string, nvml.Return) {
	if d == nil {
		return "", nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetSerial()
}

func (s *Sim) DeviceGetVbiosVersion(d nvml.Device) (string, nvml.Return) {
	if d == nil {
		return "", nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetVbiosVersion()
}

func (s *Sim) DeviceGetPciInfo(d nvml.Device) (nvml.PciInfo, nvml.Return) {
	if d == nil {
		return nvml.PciInfo{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetPciInfo()
}

func (s *Sim) DeviceGetIndex(d nvml.Device) (int, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetIndex()
}

func (s *Sim) DeviceGetMemoryInfo(d nvml.Device) (nvml.Memory, nvml.Return) {
	if d == nil {
		return nvml.Memory{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetMemoryInfo()
}

func (s *Sim) DeviceGetMemoryInfo_v2(d nvml.Device) (nvml.Memory_v2, nvml.Return) {
	if d == nil {
		return nvml.Memory_v2{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetMemoryInfo_v2()
}

func (s *Sim) DeviceGetComputeRunningProcesses(d nvml.Device) ([]nvml.ProcessInfo, nvml.Return) {
	if d == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetComputeRunningProcesses()
}

func (s *Sim) DeviceGetGraphicsRunningProcesses(d nvml.Device) ([]nvml.ProcessInfo, nvml.Return) {
	if d == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetGraphicsRunningProcesses()
}

func (s *Sim) DeviceGetUtilizationRates(d nvml.Device) (nvml.Utilization, nvml.Return) {
	if d == nil {
		return nvml.Utilization{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetUtilizationRates()
}

func (s *Sim) DeviceGetMigMode(d nvml.Device) (int, int, nvml.Return) {
	if d == nil {
		return 0, 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetMigMode()
}

func (s *Sim) DeviceGetRetiredPages(d nvml.Device, c nvml.PageRetirementCause) ([]uint64, nvml.Return) {
	if d == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetRetiredPages(c)
}

func (s *Sim) DeviceGetRetiredPages_v2(d nvml.Device, c nvml.PageRetirementCause) ([]uint64, []uint64, nvml.Return) {
	if d == nil {
		return nil, nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetRetiredPages_v2(c)
}

func (s *Sim) DeviceGetRetiredPagesPendingStatus(d nvml.Device) (nvml.EnableState, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetRetiredPagesPendingStatus()
}

func (s *Sim) DeviceGetRemappedRows(d nvml.Device) (int, int, bool, bool, nvml.Return) {
	if d == nil {
		return 0, 0, false, false, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetRemappedRows()
}

func (s *Sim) DeviceGetEccMode(d nvml.Device) (nvml.EnableState, nvml.EnableState, nvml.Return) {
	if d == nil {
		return 0, 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetEccMode()
}

func (s *Sim) DeviceGetTotalEccErrors(d nvml.Device, t nvml.MemoryErrorType, c nvml.EccCounterType) (uint64, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetTotalEccErrors(t, c)
}

func (s *Sim) DeviceGetSupportedEventTypes(d nvml.Device) (uint64, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetSupportedEventTypes()
}

func (s *Sim) DeviceRegisterEvents(d nvml.Device, types uint64, set nvml.EventSet) nvml.Return {
	if d == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return d.RegisterEvents(types, set)
}

func (s *Sim) DeviceGetMaxMigDeviceCount(d nvml.Device) (int, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetMaxMigDeviceCount()
}

func (s *Sim) DeviceGetMigDeviceHandleByIndex(d nvml.Device, i int) (nvml.Device, nvml.Return) {
	if d == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetMigDeviceHandleByIndex(i)
}

func (s *Sim) DeviceIsMigDeviceHandle(d nvml.Device) (bool, nvml.Return) {
	if d == nil {
		return false, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.IsMigDeviceHandle()
}

func (s *Sim) DeviceGetGpuInstanceId(d nvml.Device) (int, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetGpuInstanceId()
}

func (s *Sim) DeviceGetComputeInstanceId(d nvml.Device) (int, nvml.Return) {
	if d == nil {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetComputeInstanceId()
}

func (s *Sim) DeviceGetDeviceHandleFromMigDeviceHandle(d nvml.Device) (nvml.Device, nvml.Return) {
	if d == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GetDeviceHandleFromMigDeviceHandle()
}

package nvmlx

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// fakeLib is a mock library over n plain GPUs; missing are the symbols it lacks. The
// receiver's own tests drive the full fake (memory, processes, MIG, events) end to end.
func fakeLib(n int, missing ...string) *mock.Interface {
	lacks := map[string]bool{}
	for _, m := range missing {
		lacks[m] = true
	}
	devices := make([]nvml.Device, n)
	for i := range devices {
		uuid := fmt.Sprintf("GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd", i)
		devices[i] = &mock.Device{
			GetUUIDFunc:        func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
			GetMinorNumberFunc: func() (int, nvml.Return) { return 10 + i, nvml.SUCCESS },
			GetNameFunc:        func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
			GetMemoryInfoFunc:  func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.SUCCESS },
			GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) {
				var p nvml.PciInfo
				for j, c := range fmt.Sprintf("00000000:%02X:00.0", 0x18+i) {
					p.BusId[j] = int8(c)
				}
				return p, nvml.SUCCESS
			},
			GetSerialFunc:       func() (string, nvml.Return) { return "1323000000000", nvml.SUCCESS },
			GetVbiosVersionFunc: func() (string, nvml.Return) { return "96.00.30.00.01", nvml.SUCCESS },
		}
	}
	return &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "570.86.15", nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(devices), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(devices) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devices[i], nvml.SUCCESS
		},
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(name string) error {
				if lacks[name] {
					return fmt.Errorf("undefined symbol: %s", name)
				}
				return nil
			}}
		},
	}
}

package gpumemreceiver

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// memoryReading is one device's framebuffer accounting, in bytes.
type memoryReading struct {
	total, free, used int64
	// reserved is the driver and firmware reserve; known only from memory info v2.
	reserved    int64
	hasReserved bool
}

// readMemory prefers memory info v2, whose used excludes the driver's reserve, and falls back
// to v1 (used = total - free, reserve included and unknown) on drivers or parts without it.
func readMemory(d *device) (memoryReading, error) {
	if d.memoryV2 != unsupported {
		m, r := d.handle.GetMemoryInfo_v2()
		ok, err := d.memoryV2.check(r)
		if err != nil {
			return memoryReading{}, fmt.Errorf("read memory info v2 of GPU %s: %w", d.uuid, err)
		}
		if ok {
			return memoryReading{
				total: int64(m.Total), free: int64(m.Free), used: int64(m.Used),
				reserved: int64(m.Reserved), hasReserved: true,
			}, nil
		}
	}
	m, r := d.handle.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return memoryReading{}, fmt.Errorf("read memory info of GPU %s: %w", d.uuid, r)
	}
	return memoryReading{total: int64(m.Total), free: int64(m.Free), used: int64(m.Total - m.Free)}, nil
}

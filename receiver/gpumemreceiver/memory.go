package gpumemreceiver

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// memoryMetricsLen is what a failed memory read costs: usage, limit, utilization, free,
// reserved and unattributed.
const memoryMetricsLen = 6

// recordMemory records the framebuffer metrics of a device and returns the reading for the
// metrics that build on it; ok is false when there is none.
func (s *metricsScraper) recordMemory(d *device, ts pcommon.Timestamp) (mem memoryReading, ok bool, lost int, err error) {
	mem, err = readMemory(d)
	switch {
	case err == nil:
	case d.mig.enabled && errors.Is(err, nvml.ERROR_NO_PERMISSION):
		// A MIG GPU's aggregate memory is for privileged callers only; each instance
		// reports its own.
		return mem, false, 0, nil
	default:
		return mem, false, memoryMetricsLen, err
	}
	s.mb.RecordInt(metadata.HwGpuMemoryUsage, ts, mem.used)
	s.mb.RecordInt(metadata.HwGpuMemoryLimit, ts, mem.total)
	s.mb.RecordInt(metadata.NvidiaGpuMemoryFree, ts, mem.free)
	if mem.total > 0 {
		s.mb.RecordDouble(metadata.HwGpuMemoryUtilization, ts, float64(mem.used)/float64(mem.total))
	}
	if mem.hasReserved {
		s.mb.RecordInt(metadata.NvidiaGpuMemoryReserved, ts, mem.reserved)
	}
	return mem, true, 0, nil
}

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

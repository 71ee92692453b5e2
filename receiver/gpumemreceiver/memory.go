package gpumemreceiver

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// memoryMetricsLen is what a failed memory read costs: usage, limit, utilization, free,
// reserved and unattributed.
const memoryMetricsLen = 6

// memoryState is the memory concern's per-device state: whether memory info v2 works.
type memoryState struct{ v2 nvmlx.Support }

func (st *memoryState) probe(d *nvmlx.Device) { st.v2 = d.Initial(nvmlx.CallMemoryInfoV2) }

// recordMemory records the framebuffer metrics of a device and returns the reading for the
// metrics that build on it; ok is false when there is none. guard sees the readings no GPU
// can give.
func recordMemory(mb *metadata.MetricsBuilder, guard *readingGuard, d *nvmlx.Device, st *memoryState, ts pcommon.Timestamp) (mem memoryReading, ok bool, lost int, err error) {
	mem, err = readMemory(d, st)
	switch {
	case err == nil:
	case d.MIGEnabled() && errors.Is(err, nvml.ERROR_NO_PERMISSION):
		// A MIG GPU's aggregate memory is for privileged callers only; each instance
		// reports its own.
		return mem, false, 0, nil
	default:
		return mem, false, memoryMetricsLen, err
	}
	mem, why, ok := checkMemory(mem)
	if why != rejectNone {
		guard.reject(d, why, zap.Int64("total", mem.total), zap.Int64("used", mem.used),
			zap.Int64("free", mem.free), zap.Int64("reserved", mem.reserved))
	}
	if !ok {
		// Not an NVML failure: the call answered, with numbers no GPU can have.
		return mem, false, 0, nil
	}
	mb.RecordInt(metadata.HwGpuMemoryUsage, ts, mem.used)
	mb.RecordInt(metadata.HwGpuMemoryLimit, ts, mem.total)
	mb.RecordInt(metadata.NvidiaGpuMemoryFree, ts, mem.free)
	if mem.total > 0 {
		mb.RecordDouble(metadata.HwGpuMemoryUtilization, ts, float64(mem.used)/float64(mem.total))
	}
	if mem.hasReserved {
		mb.RecordInt(metadata.NvidiaGpuMemoryReserved, ts, mem.reserved)
	}
	return mem, true, 0, nil
}

// memoryReading is one device's framebuffer accounting, in bytes.
type memoryReading struct {
	total, free, used int64
	// reserved is the driver and firmware reserve; known only from memory info v2.
	reserved    int64
	hasReserved bool
	// repaired: NVML's numbers did not add up and one was recomputed (checkMemory). Good
	// enough to report; the runway forecasts from it only once it lasts.
	repaired bool
}

// readMemory prefers memory info v2, whose used excludes the driver's reserve, and falls back
// to v1 (used = total - free, reserve included and unknown) on drivers or parts without it.
func readMemory(d *nvmlx.Device, st *memoryState) (memoryReading, error) {
	if st.v2 != nvmlx.Unsupported {
		m, r := d.Handle.GetMemoryInfo_v2()
		ok, err := st.v2.Check(r)
		if err != nil {
			return memoryReading{}, fmt.Errorf("read memory info v2 of GPU %s: %w", d.UUID, err)
		}
		if ok {
			return memoryReading{
				total: int64(m.Total), free: int64(m.Free), used: int64(m.Used),
				reserved: int64(m.Reserved), hasReserved: true,
			}, nil
		}
	}
	m, r := d.Handle.GetMemoryInfo()
	if r != nvml.SUCCESS {
		return memoryReading{}, fmt.Errorf("read memory info of GPU %s: %w", d.UUID, r)
	}
	return memoryReading{total: int64(m.Total), free: int64(m.Free), used: int64(m.Total - m.Free)}, nil
}

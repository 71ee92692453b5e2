package classify

import (
	"time"
)

// Shared builders for crafted GPU states: an H100 80GB at the OOM moment with a 15-minute,
// 1-second window.

var oomTime = time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)

const (
	h100Total = 81559 * mib
	window    = 15 * time.Minute
)

// blankOOM is a message that stated nothing.
func blankOOM() OOM {
	return OOM{RequestedBytes: -1, TotalBytes: -1, FreeBytes: -1, AllocatedBytes: -1,
		ReservedBytes: -1, ProcessBytes: -1, DeviceIndex: -1, PID: -1, Time: oomTime}
}

// pytorchOOM is a PyTorch 2.x message from pid 100: request, free, allocator numbers.
func pytorchOOM(req, free, alloc, reserved int64) OOM {
	o := blankOOM()
	o.Framework = "pytorch"
	o.PID = 100
	o.DeviceIndex = 0
	o.RequestedBytes, o.TotalBytes, o.FreeBytes = req, h100Total, free
	o.AllocatedBytes, o.ReservedBytes = alloc, reserved
	return o
}

// series builds one point per second over the window ending at the OOM from fn(seconds
// since the window start).
func series(fn func(sec float64) float64) []Point {
	n := int(window / time.Second)
	s := make([]Point, n)
	start := oomTime.Add(-window + time.Second)
	for i := range s {
		s[i] = Point{T: start.Add(time.Duration(i) * time.Second).UnixNano(), V: fn(float64(i))}
	}
	return s
}

func flat(v int64) func(float64) float64 { return func(float64) float64 { return float64(v) } }

// proc is a process with a flat series at its bytes.
func proc(pid int, name, container string, bytes int64) Process {
	return Process{PID: pid, Name: name, ContainerID: container, Type: "compute", Bytes: bytes, Series: series(flat(bytes))}
}

// gpuWith builds a fresh, pid-matched H100 state whose used memory is the processes' sum
// plus the driver's reserved share plus extra unattributed bytes, with flat usage.
func gpuWith(unattributed int64, ps ...Process) *GPUState {
	const reserved = 512 * mib
	used := reserved + unattributed + sumProcessBytes(ps)
	return &GPUState{
		HWID:         "GPU-5a8e1c2d-0000-4000-8000-0123456789ab",
		Name:         "NVIDIA H100 80GB HBM3",
		MatchedBy:    MatchedByPID,
		Total:        h100Total,
		Used:         used,
		Free:         h100Total - used,
		Reserved:     reserved,
		Unattributed: unattributed,
		SampleAge:    time.Second,
		Usage:        series(flat(used)),
		Processes:    ps,
		RetiredPages: map[string]int64{"single_bit_ecc": 0, "double_bit_ecc": 0},
		RemappedRows: map[string]int64{"correctable": 0, "uncorrectable": 0},
	}
}

// setUsageFromProcesses recomputes used, free and usage from the processes' series, for
// states whose processes do not hold flat.
func setUsageFromProcesses(g *GPUState) {
	n := len(g.Usage)
	for i := range n {
		v := float64(g.Reserved + g.Unattributed)
		for _, p := range g.Processes {
			v += p.Series[i].V
		}
		g.Usage[i].V = v
	}
	g.Used = int64(g.Usage[n-1].V)
	g.Free = g.Total - g.Used
}

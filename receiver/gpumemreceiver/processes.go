package gpumemreceiver

import (
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

const (
	processTypeCompute  = "compute"
	processTypeGraphics = "graphics"
)

// gpuProcess is one process holding a context on a device.
type gpuProcess struct {
	pid   uint32
	typ   string
	bytes int64 // -1 when NVML cannot tell (NVML_VALUE_NOT_AVAILABLE)
}

// readProcesses appends the device's compute and graphics processes to buf. A process with
// both kinds of context is listed under each, as NVML lists it.
func readProcesses(d *device, buf []gpuProcess) ([]gpuProcess, error) {
	var err error
	if buf, err = appendProcesses(buf, d, &d.compute, processTypeCompute, d.handle.GetComputeRunningProcesses); err != nil {
		return buf, err
	}
	return appendProcesses(buf, d, &d.graphics, processTypeGraphics, d.handle.GetGraphicsRunningProcesses)
}

func appendProcesses(buf []gpuProcess, d *device, sup *support, typ string, list func() ([]nvml.ProcessInfo, nvml.Return)) ([]gpuProcess, error) {
	if *sup == unsupported {
		return buf, nil
	}
	infos, r := list()
	ok, err := sup.check(r)
	if err != nil {
		return buf, fmt.Errorf("list %s processes of GPU %s: %w", typ, d.uuid, err)
	}
	if !ok {
		return buf, nil
	}
	for _, p := range infos {
		bytes := int64(-1)
		if p.UsedGpuMemory != math.MaxUint64 {
			bytes = int64(p.UsedGpuMemory)
		}
		buf = append(buf, gpuProcess{pid: p.Pid, typ: typ, bytes: bytes})
	}
	return buf, nil
}

// attributedBytes sums the processes' memory, counting a pid listed under both types once.
func attributedBytes(procs []gpuProcess) int64 {
	var sum int64
	for i, p := range procs {
		if p.bytes < 0 {
			continue
		}
		dup := false
		for _, q := range procs[:i] {
			if q.pid == p.pid {
				dup = true
				break
			}
		}
		if !dup {
			sum += p.bytes
		}
	}
	return sum
}

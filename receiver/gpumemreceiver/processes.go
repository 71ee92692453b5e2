package gpumemreceiver

import (
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/procfs"
)

// processMetricsLen is what a failed process list costs: per-process memory, the process
// counts and unattributed memory.
const processMetricsLen = 3

// recordProcessesOf lists the device's processes and records them and, with a v2 memory
// reading, the memory no process accounts for.
func (s *metricsScraper) recordProcessesOf(d *nvmlx.Device, st *processesState, ts pcommon.Timestamp, mem memoryReading, memOK bool) (lost int, err error) {
	procs, err := readProcesses(d, st, s.procBuf[:0])
	s.procBuf = procs
	if err != nil {
		return processMetricsLen, err
	}
	procs = s.guard.checkProcesses(d, procs, s.guard.limit(d, mem, memOK))
	s.recordProcesses(d, procs, ts)
	// Unattributed needs the reserve (v2) to be meaningful: with v1 it would count the
	// driver's reserve as unexplained memory. While NVML hides other namespaces' processes
	// it would be their memory, not a zombie's: not emitted (nvidia.gpu.process.hidden says why).
	if memOK && mem.hasReserved && !s.hidden {
		s.mb.RecordInt(metadata.NvidiaGpuMemoryUnattributed, ts, max(0, mem.used-attributedBytes(procs)))
	}
	return 0, nil
}

// gpuProcess is one process holding a context on a device.
type gpuProcess struct {
	pid   uint32
	typ   string
	bytes int64 // -1 when NVML cannot tell (NVML_VALUE_NOT_AVAILABLE)
}

// processesState is the process list concern's per-device state: whether each list works.
// Both are probed afresh whatever the library exports (go-nvml resolves their symbols).
type processesState struct{ compute, graphics nvmlx.Support }

func (st *processesState) probe() {
	st.compute, st.graphics = nvmlx.SupportUnknown, nvmlx.SupportUnknown
}

// readProcesses appends the device's compute and graphics processes to buf. A process with
// both kinds of context is listed under each, as NVML lists it.
func readProcesses(d *nvmlx.Device, st *processesState, buf []gpuProcess) ([]gpuProcess, error) {
	var err error
	if buf, err = appendProcesses(buf, d, &st.compute, metadata.AttrNvidiaGpuProcessTypeCompute, d.Handle.GetComputeRunningProcesses); err != nil {
		return buf, err
	}
	return appendProcesses(buf, d, &st.graphics, metadata.AttrNvidiaGpuProcessTypeGraphics, d.Handle.GetGraphicsRunningProcesses)
}

func appendProcesses(buf []gpuProcess, d *nvmlx.Device, sup *nvmlx.Support, typ string, list func() ([]nvml.ProcessInfo, nvml.Return)) ([]gpuProcess, error) {
	if *sup == nvmlx.Unsupported {
		return buf, nil
	}
	infos, r := list()
	ok, err := sup.Check(r)
	if err != nil {
		return buf, fmt.Errorf("list %s processes of GPU %s: %w", typ, d.UUID, err)
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

// recordProcesses records each process's memory and the process counts of one device, and
// shows each process to the Kubernetes concern (pods.go).
func (s *metricsScraper) recordProcesses(d *nvmlx.Device, procs []gpuProcess, ts pcommon.Timestamp) {
	var compute, graphics int64
	if s.procs != nil {
		s.mb.Reserve(metadata.NvidiaGpuProcessMemoryUsage, len(procs))
	}
	for _, p := range procs {
		if p.typ == metadata.AttrNvidiaGpuProcessTypeCompute {
			compute++
		} else {
			graphics++
		}
		if s.procs == nil {
			continue
		}
		// A process that exited between NVML's list and this read keeps its memory and pid;
		// only what /proc would have told is missing. So does every process when proc_root
		// is another pid namespace's, which pids says once. NVML's pids in the collector's
		// namespace are not looked up in a proc_root above it: they would name others.
		var info procfs.Info
		if s.lookups {
			var err error
			info, err = s.procs.Lookup(p.pid)
			if !s.hidden {
				s.pids.observe(err)
			}
		}
		s.live[p.pid] = struct{}{}
		id := s.pods.identity(info, d.UUID)
		s.pods.observe(podProcess{pid: p.pid, bytes: p.bytes, info: info, id: id})
		if p.bytes < 0 {
			continue
		}
		dp, ok := s.mb.RecordInt(metadata.NvidiaGpuProcessMemoryUsage, ts, p.bytes)
		if !ok {
			continue
		}
		attrs := dp.Attributes()
		attrs.EnsureCapacity(11)
		putProcessAttributes(attrs, p.pid, info)
		putPodNames(attrs, id)
		attrs.PutStr(metadata.AttrNvidiaGpuProcessType, p.typ)
	}
	if dp, ok := s.mb.RecordInt(metadata.NvidiaGpuProcessCount, ts, compute); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuProcessType, metadata.AttrNvidiaGpuProcessTypeCompute)
	}
	if dp, ok := s.mb.RecordInt(metadata.NvidiaGpuProcessCount, ts, graphics); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuProcessType, metadata.AttrNvidiaGpuProcessTypeGraphics)
	}
}

// putProcessAttributes writes what identifies a process on its per-process points: the pid,
// the pid in its own namespace, the executable name, its container and pod and its Slurm
// job and step, each only where known.
func putProcessAttributes(attrs pcommon.Map, pid uint32, info procfs.Info) {
	attrs.PutInt(metadata.AttrProcessPID, int64(pid))
	// Only where it differs: for a process in the host's namespace it would repeat the pid
	// (and cost an allocation per point).
	if info.VPID != 0 && info.VPID != int(pid) {
		attrs.PutInt(metadata.AttrProcessVPID, int64(info.VPID))
	}
	if info.ExecutableName != "" {
		attrs.PutStr(metadata.AttrProcessExecutableName, info.ExecutableName)
	}
	if info.ContainerID != "" {
		attrs.PutStr(metadata.AttrContainerID, info.ContainerID)
	}
	if info.PodUID != "" {
		attrs.PutStr(metadata.AttrK8sPodUID, info.PodUID)
	}
	// The parser sets both or neither.
	if info.SlurmJobID != "" {
		attrs.PutStr(metadata.AttrSlurmJobID, info.SlurmJobID)
		attrs.PutStr(metadata.AttrSlurmJobStep, info.SlurmStep)
	}
}

package gpumemreceiver

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/podresources"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/procfs"
)

// nvmlDeviceGetProcessUtilization (Maxwell and later; not on a GPU in MIG mode) returns one
// sample per process that was busy in the driver's recent sample periods, each stamped with
// the CPU time (µs) it was taken; asked with the newest timestamp already read, it returns
// only what is new, and NOT_FOUND when nothing is
// (https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html). This is what
// nvidia-smi pmon prints as sm and mem.

// processUtilState is the per-process utilization concern's per-device state: whether the
// call works, and NVML's timestamp (µs) of the newest sample read, which outlives a probe.
type processUtilState struct {
	support nvmlx.Support
	seen    uint64
}

func (st *processUtilState) probe(d *nvmlx.Device) {
	st.support = d.Initial(nvmlx.CallProcessUtilization)
}

// recordProcessUtilization records each sampled process's SM and memory-controller busy
// fraction; a failed read costs that one metric.
func (s *metricsScraper) recordProcessUtilization(d *nvmlx.Device, st *processUtilState, ts pcommon.Timestamp) (lost int, err error) {
	// In MIG mode NVML answers NOT_SUPPORTED, which must not switch the call off for good:
	// the GPU may leave MIG mode.
	if s.procs == nil || st.support == nvmlx.Unsupported || d.MIGEnabled() || !s.mb.Enabled(metadata.NvidiaGpuProcessUtilization) {
		return 0, nil
	}
	samples, r := d.Handle.GetProcessUtilization(st.seen)
	switch r {
	case nvml.ERROR_NOT_FOUND:
		// No process was busy since the last read.
		st.support = nvmlx.Supported
		return 0, nil
	case nvml.ERROR_INSUFFICIENT_SIZE:
		// go-nvml's answer when the driver has no samples at all, or when a process started
		// between its size query and its read: the next scrape has them.
		st.support = nvmlx.Supported
		return 0, nil
	}
	ok, err := st.support.Check(r)
	if err != nil {
		return 1, fmt.Errorf("read process utilization of GPU %s: %w", d.UUID, err)
	}
	if !ok {
		return 0, nil
	}
	s.mb.Reserve(metadata.NvidiaGpuProcessUtilization, 2*len(samples))
	for i, p := range samples {
		st.seen = max(st.seen, p.TimeStamp)
		if newerSampleOf(samples[i+1:], p) {
			continue // asked from 0 (the first read), the driver may hold several per process
		}
		info, err := s.procs.Lookup(p.Pid)
		s.pids.observe(err)
		s.live[p.Pid] = struct{}{}
		id := s.pods.identity(info, d.UUID)
		s.recordProcessTask(p.Pid, info, id, metadata.AttrHwGpuTaskGeneral, p.SmUtil, ts)
		s.recordProcessTask(p.Pid, info, id, metadata.AttrHwGpuTaskMemoryController, p.MemUtil, ts)
	}
	return 0, nil
}

// newerSampleOf says whether rest holds a sample of p's process at least as new as p.
func newerSampleOf(rest []nvml.ProcessUtilizationSample, p nvml.ProcessUtilizationSample) bool {
	for _, q := range rest {
		if q.Pid == p.Pid && q.TimeStamp >= p.TimeStamp {
			return true
		}
	}
	return false
}

func (s *metricsScraper) recordProcessTask(pid uint32, info procfs.Info, id podresources.Identity, task string, percent uint32, ts pcommon.Timestamp) {
	dp, ok := s.mb.RecordDouble(metadata.NvidiaGpuProcessUtilization, ts, float64(percent)/100)
	if !ok {
		return
	}
	attrs := dp.Attributes()
	attrs.EnsureCapacity(11)
	putProcessAttributes(attrs, pid, info)
	putPodNames(attrs, id)
	attrs.PutStr(metadata.AttrHwGpuTask, task)
}

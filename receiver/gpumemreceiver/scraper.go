package gpumemreceiver

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/procfs"
)

// metricsScraper turns one pass over the devices into metrics. The scraper controller calls
// scrape from one goroutine at a time, so the scratch buffers need no lock.
type metricsScraper struct {
	sess   *session
	procs  *procfs.Reader // nil when per-process metrics are off
	mb     *metadata.MetricsBuilder
	logger *zap.Logger
	now    func() time.Time

	// scratch, reused across scrapes
	procBuf []gpuProcess
	live    map[uint32]struct{}
}

func (s *metricsScraper) scrape(context.Context) (pmetric.Metrics, error) {
	ts := pcommon.NewTimestampFromTime(s.now())
	var errs []error
	failed := 0
	clear(s.live)
	err := s.sess.withDevices(func(driver string, devices []*device) {
		for _, d := range devices {
			n, err := s.scrapeDevice(d, driver, ts)
			if err != nil {
				errs = append(errs, err)
				failed += n
			}
		}
	})
	if errors.Is(err, errNVMLDown) {
		// Logged once and reported as component status by the session; an error per tick
		// would only repeat it.
		return pmetric.NewMetrics(), nil
	}
	if s.procs != nil {
		s.procs.Retain(s.live)
	}
	md := s.mb.Emit()
	if len(errs) > 0 {
		return md, scrapererror.NewPartialScrapeError(errors.Join(errs...), failed)
	}
	return md, nil
}

// scrapeDevice records one GPU. A failing call costs only the metrics that depend on it;
// the count of metrics lost is returned with the errors.
func (s *metricsScraper) scrapeDevice(d *device, driver string, ts pcommon.Timestamp) (failed int, err error) {
	var errs []error
	d.describe(s.mb.StartResource(), driver)

	mem, memErr := readMemory(d)
	if memErr != nil {
		errs = append(errs, memErr)
		failed += 6
	} else {
		s.mb.RecordInt(metadata.HwGpuMemoryUsage, ts, mem.used)
		s.mb.RecordInt(metadata.HwGpuMemoryLimit, ts, mem.total)
		s.mb.RecordInt(metadata.NvidiaGpuMemoryFree, ts, mem.free)
		if mem.total > 0 {
			s.mb.RecordDouble(metadata.HwGpuMemoryUtilization, ts, float64(mem.used)/float64(mem.total))
		}
		if mem.hasReserved {
			s.mb.RecordInt(metadata.NvidiaGpuMemoryReserved, ts, mem.reserved)
		}
	}

	if s.wantProcesses() {
		procs, err := readProcesses(d, s.procBuf[:0])
		s.procBuf = procs
		if err != nil {
			errs = append(errs, err)
			failed += 3
		} else {
			s.recordProcesses(procs, ts)
			// Unattributed needs the reserve (v2) to be meaningful: with v1 it would count
			// the driver's reserve as unexplained memory.
			if memErr == nil && mem.hasReserved {
				s.mb.RecordInt(metadata.NvidiaGpuMemoryUnattributed, ts, max(0, mem.used-attributedBytes(procs)))
			}
		}
	}

	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
			failed++
		}
	}
	note(s.recordRetiredPages(d, ts))
	note(s.recordRemappedRows(d, ts))
	note(s.recordECC(d, ts))
	d.xid.record(s.mb, ts)

	if s.mb.Enabled(metadata.HwGpuUtilization) {
		frac, ok, err := readUtilization(d)
		if err != nil {
			errs = append(errs, err)
			failed++
		} else if ok {
			if dp, ok := s.mb.RecordDouble(metadata.HwGpuUtilization, ts, frac); ok {
				dp.Attributes().PutStr("hw.gpu.task", "general")
			}
		}
	}
	return failed, errors.Join(errs...)
}

func (s *metricsScraper) wantProcesses() bool {
	return s.procs != nil || s.mb.Enabled(metadata.NvidiaGpuMemoryUnattributed) || s.mb.Enabled(metadata.NvidiaGpuProcessCount)
}

func (s *metricsScraper) recordProcesses(procs []gpuProcess, ts pcommon.Timestamp) {
	var compute, graphics int64
	for _, p := range procs {
		if p.typ == processTypeCompute {
			compute++
		} else {
			graphics++
		}
		if s.procs == nil || p.bytes < 0 {
			continue
		}
		dp, ok := s.mb.RecordInt(metadata.NvidiaGpuProcessMemoryUsage, ts, p.bytes)
		if !ok {
			continue
		}
		s.live[p.pid] = struct{}{}
		attrs := dp.Attributes()
		attrs.EnsureCapacity(5)
		attrs.PutInt("process.pid", int64(p.pid))
		attrs.PutStr("nvidia.gpu.process.type", p.typ)
		// A process that exited between NVML's list and this read keeps its memory and pid;
		// only what /proc would have told is missing.
		info, _ := s.procs.Lookup(p.pid)
		if info.Comm != "" {
			attrs.PutStr("process.executable.name", info.Comm)
		}
		if info.ContainerID != "" {
			attrs.PutStr("container.id", info.ContainerID)
		}
		if info.PodUID != "" {
			attrs.PutStr("k8s.pod.uid", info.PodUID)
		}
	}
	if dp, ok := s.mb.RecordInt(metadata.NvidiaGpuProcessCount, ts, compute); ok {
		dp.Attributes().PutStr("nvidia.gpu.process.type", processTypeCompute)
	}
	if dp, ok := s.mb.RecordInt(metadata.NvidiaGpuProcessCount, ts, graphics); ok {
		dp.Attributes().PutStr("nvidia.gpu.process.type", processTypeGraphics)
	}
}

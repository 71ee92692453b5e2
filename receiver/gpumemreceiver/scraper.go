package gpumemreceiver

import (
	"context"
	"errors"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
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

	// pids says once when proc_root does not show NVML's pids.
	pids pidVisibility

	// scratch, reused across scrapes
	procBuf []gpuProcess
	live    map[uint32]struct{}
	errs    []error
}

func (s *metricsScraper) scrape(context.Context) (pmetric.Metrics, error) {
	ts := pcommon.NewTimestampFromTime(s.now())
	s.errs = s.errs[:0]
	failed := 0
	clear(s.live)
	err := s.sess.withDevices(func(driver string, devices []*device) {
		for _, d := range devices {
			failed += s.scrapeGPU(d, driver, ts)
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
	if len(s.errs) > 0 {
		return md, scrapererror.NewPartialScrapeError(errors.Join(s.errs...), failed)
	}
	return md, nil
}

// scrapeGPU records a GPU and, in MIG mode, each of its MIG instances as a resource of its
// own. Errors go to s.errs; the count of metrics lost is returned.
func (s *metricsScraper) scrapeGPU(d *device, driver string, ts pcommon.Timestamp) (failed int) {
	if d.mig.due() {
		if err := d.refreshMIG(s.logger); err != nil {
			s.errs = append(s.errs, err)
		}
	}
	failed = s.scrapeDevice(d, driver, ts)
	if len(d.mig.instances) == 0 {
		return failed
	}
	type failure struct {
		inst             *device
		from, to, failed int // its errors are s.errs[from:to]
	}
	var failures []failure
	for _, inst := range d.mig.instances {
		from := len(s.errs)
		n := s.scrapeDevice(inst, driver, ts)
		failed += n
		if len(s.errs) > from {
			failures = append(failures, failure{inst, from, len(s.errs), n})
		}
	}
	if failures == nil {
		return failed
	}
	// A MIG handle that fails most likely belongs to an instance destroyed by a
	// reconfiguration: read the instance list now. An instance that is gone is not an error.
	refreshErr := d.refreshMIG(s.logger)
	w := failures[0].from // s.errs[w:] are all the instances' errors, in failures' order
	for _, f := range failures {
		if d.gone(f.inst) {
			failed -= f.failed
			s.logger.Debug("MIG instance went away during the scrape", zap.String("mig_device", f.inst.uuid), zap.Error(s.errs[f.from]))
			continue
		}
		w += copy(s.errs[w:], s.errs[f.from:f.to])
	}
	s.errs = s.errs[:w]
	if refreshErr != nil {
		s.errs = append(s.errs, refreshErr)
	}
	return failed
}

// scrapeDevice records one GPU or MIG instance. A failing call costs only the metrics that
// depend on it; errors go to s.errs and the count of metrics lost is returned.
//
// A MIG instance has memory and processes only; the device-level concerns (ECC, retired
// pages, remapping, Xid, utilization) stay with its GPU, which in MIG mode lists no
// processes of its own: they are reported on the instances they run in.
func (s *metricsScraper) scrapeDevice(d *device, driver string, ts pcommon.Timestamp) (failed int) {
	d.describe(s.mb.StartResource(), driver)

	mem, memErr := readMemory(d)
	switch {
	case memErr == nil:
		s.mb.RecordInt(metadata.HwGpuMemoryUsage, ts, mem.used)
		s.mb.RecordInt(metadata.HwGpuMemoryLimit, ts, mem.total)
		s.mb.RecordInt(metadata.NvidiaGpuMemoryFree, ts, mem.free)
		if mem.total > 0 {
			s.mb.RecordDouble(metadata.HwGpuMemoryUtilization, ts, float64(mem.used)/float64(mem.total))
		}
		if mem.hasReserved {
			s.mb.RecordInt(metadata.NvidiaGpuMemoryReserved, ts, mem.reserved)
		}
	case d.mig.enabled && errors.Is(memErr, nvml.ERROR_NO_PERMISSION):
		// A MIG GPU's aggregate memory is for privileged callers only; each instance
		// reports its own.
	default:
		s.errs = append(s.errs, memErr)
		failed += 6
	}

	if s.wantProcesses() && !d.mig.enabled {
		procs, err := readProcesses(d, s.procBuf[:0])
		s.procBuf = procs
		if err != nil {
			s.errs = append(s.errs, err)
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
	if d.parent != nil {
		return failed
	}

	failed += s.note(s.recordRetiredPages(d, ts))
	failed += s.note(s.recordRemappedRows(d, ts))
	failed += s.note(s.recordECC(d, ts))
	d.xid.record(s.mb, ts)

	if s.mb.Enabled(metadata.HwGpuUtilization) {
		frac, ok, err := readUtilization(d)
		if err != nil {
			failed += s.note(err)
		} else if ok {
			if dp, ok := s.mb.RecordDouble(metadata.HwGpuUtilization, ts, frac); ok {
				dp.Attributes().PutStr("hw.gpu.task", "general")
			}
		}
	}
	return failed
}

// note keeps err, if any, and says how many metrics it cost.
func (s *metricsScraper) note(err error) int {
	if err == nil {
		return 0
	}
	s.errs = append(s.errs, err)
	return 1
}

func (s *metricsScraper) wantProcesses() bool {
	return s.procs != nil || s.mb.Enabled(metadata.NvidiaGpuMemoryUnattributed) || s.mb.Enabled(metadata.NvidiaGpuProcessCount)
}

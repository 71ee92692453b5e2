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

	// pids says once when proc_root does not show NVML's pids.
	pids pidVisibility
	// runway forecasts the time to a full GPU (runway.go); nil when runway is off.
	runway *runwayTracker
	// failures reports a call failing scrape after scrape once, and counts every failure.
	failures *failureLog

	// scratch, reused across scrapes
	procBuf []gpuProcess
	live    map[uint32]struct{}
}

func (s *metricsScraper) scrape(context.Context) (pmetric.Metrics, error) {
	now := s.now()
	ts := pcommon.NewTimestampFromTime(now)
	s.sess.maybeRediscover(now)
	var lost scrapeLoss
	clear(s.live)
	err := s.sess.withDevices(func(driver string, devices []*device) {
		for _, d := range devices {
			lost.merge(s.scrapeGPU(d, driver, ts))
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
	s.runway.flush(int64(ts))
	md := s.mb.Emit()
	// A failure already reported in the previous scrape is only counted: the scraper
	// controller would log it (with a stack trace) every second.
	if fresh := s.failures.observe(lost.errs, lost.lostGPUs); len(fresh) > 0 {
		return md, scrapererror.NewPartialScrapeError(errors.Join(fresh...), lost.metrics)
	}
	return md, nil
}

// scrapeLoss is what a scrape of one device (or more) could not record: how many metrics,
// and why.
type scrapeLoss struct {
	metrics int
	errs    []error
	// lostGPUs counts GPUs lost (GPU_IS_LOST or Xid 79), whose errors are not in errs.
	lostGPUs int
}

// add notes a recorder's loss; a nil err costs nothing.
func (l *scrapeLoss) add(metrics int, err error) {
	if err == nil {
		return
	}
	l.metrics += metrics
	l.errs = append(l.errs, err)
}

func (l *scrapeLoss) merge(o scrapeLoss) {
	l.metrics += o.metrics
	l.errs = append(l.errs, o.errs...)
	l.lostGPUs += o.lostGPUs
}

// scrapeGPU records a GPU and, in MIG mode, each of its MIG instances as a resource of its
// own, and returns what could not be recorded.
func (s *metricsScraper) scrapeGPU(d *device, driver string, ts pcommon.Timestamp) scrapeLoss {
	var lost scrapeLoss
	if d.lost.Load() {
		// Not called until a re-enumeration finds it answering (see maybeRediscover).
		d.describe(s.mb.StartResource(), driver)
		s.recordStatus(d, ts)
		d.xid.record(s.mb, ts)
		lost.lostGPUs++
		return lost
	}
	if d.mig.due() {
		var refresh scrapeLoss
		refresh.add(0, d.refreshMIG(s.logger))
		refresh.noteLoss(d, s.logger) // GPU_IS_LOST reading the MIG state: the warning stands for it
		lost.merge(refresh)
	}
	lost.merge(s.scrapeDevice(d, driver, ts))
	if len(d.mig.instances) == 0 || d.lost.Load() {
		return lost
	}
	type instanceLoss struct {
		inst *device
		lost scrapeLoss
	}
	var failed []instanceLoss
	for _, inst := range d.mig.instances {
		if l := s.scrapeDevice(inst, driver, ts); len(l.errs) > 0 {
			failed = append(failed, instanceLoss{inst, l})
		}
	}
	if failed == nil {
		return lost
	}
	// A MIG handle that fails most likely belongs to an instance destroyed by a
	// reconfiguration: read the instance list now. An instance that is gone is not an error.
	refreshErr := d.refreshMIG(s.logger)
	for _, f := range failed {
		if d.gone(f.inst) {
			s.logger.Debug("MIG instance went away during the scrape", zap.String("mig_device", f.inst.uuid), zap.Error(f.lost.errs[0]))
			continue
		}
		lost.merge(f.lost)
	}
	lost.add(0, refreshErr)
	return lost
}

// scrapeDevice records one GPU or MIG instance. A failing call costs only the metrics that
// depend on it, which each recorder counts.
//
// A MIG instance has memory and processes only; the device-level concerns (ECC, retired
// pages, remapping, Xid, utilization) stay with its GPU, which in MIG mode lists no
// processes of its own: they are reported on the instances they run in.
func (s *metricsScraper) scrapeDevice(d *device, driver string, ts pcommon.Timestamp) scrapeLoss {
	var lost scrapeLoss
	d.describe(s.mb.StartResource(), driver)

	mem, memOK, n, err := s.recordMemory(d, ts)
	lost.add(n, err)
	if s.wantProcesses() && !d.mig.enabled {
		lost.add(s.recordProcessesOf(d, ts, mem, memOK))
	}
	s.observeRunway(d, driver, ts, mem, memOK)
	if d.parent != nil {
		d.xid.record(s.mb, ts) // Xid lines that name this MIG instance
		lost.noteLoss(d, s.logger)
		return lost
	}
	lost.add(s.recordRetiredPages(d, ts))
	lost.add(s.recordRemappedRows(d, ts))
	lost.add(s.recordECC(d, ts))
	d.xid.record(s.mb, ts)
	lost.add(s.recordUtilization(d, ts))
	lost.add(s.recordProcessUtilization(d, ts))
	lost.add(s.recordModes(d, ts))
	lost.noteLoss(d, s.logger)
	s.recordStatus(d, ts)
	return lost
}

// noteLoss marks the device's GPU lost when a call answered GPU_IS_LOST; the one warning
// stands for those errors, which are dropped.
func (l *scrapeLoss) noteLoss(d *device, logger *zap.Logger) {
	kept := l.errs[:0]
	found := false
	for _, err := range l.errs {
		if isLost(err) {
			markLost(d, err.Error(), logger)
			found = true
			continue
		}
		kept = append(kept, err)
	}
	l.errs = kept
	if found {
		l.lostGPUs++
	}
}

func (s *metricsScraper) wantProcesses() bool {
	return s.procs != nil || s.mb.Enabled(metadata.NvidiaGpuMemoryUnattributed) || s.mb.Enabled(metadata.NvidiaGpuProcessCount)
}

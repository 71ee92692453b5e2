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
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/procfs"
)

// metricsScraper turns one pass over the devices into metrics. The scraper controller calls
// scrape from one goroutine at a time, so the scratch buffers need no lock.
type metricsScraper struct {
	sess   *nvmlx.Session
	procs  *procfs.Reader // nil when per-process metrics are off
	mb     *metadata.MetricsBuilder
	logger *zap.Logger
	now    func() time.Time

	// pids is the PID namespace's verdict, and says once when proc_root does not show
	// NVML's pids.
	pids *pidNamespace
	// hidden: this scrape's driver lists only the collector's namespace's processes;
	// lookups: NVML's pids may be looked up in proc_root (pidnamespace.go).
	hidden, lookups bool
	// runway forecasts the time to a full GPU (runway.go); nil when runway is off.
	runway *runwayTracker
	// failures reports a call failing scrape after scrape once, and counts every failure.
	failures *failureLog
	// guard rejects readings no GPU can give, counts them and warns once (readings.go).
	guard *readingGuard

	// states is what the concerns keep per device (devicestate.go).
	states deviceStates

	// scratch, reused across scrapes
	procBuf []gpuProcess
	live    map[uint32]struct{}

	// pods is the Kubernetes concern (pods.go); nil when neither kubelet source is set.
	pods *podTracker
}

func (s *metricsScraper) scrape(ctx context.Context) (pmetric.Metrics, error) {
	now := s.now()
	ts := pcommon.NewTimestampFromTime(now)
	s.sess.MaybeRediscover(now)
	s.pods.begin(ctx)
	defer s.pods.end()
	var lost scrapeLoss
	clear(s.live)
	err := s.sess.WithDevices(func(driver string, devices []*nvmlx.Device) {
		s.hidden, s.lookups = false, true
		if s.pids != nil {
			s.hidden, s.lookups = s.pids.hides(driver), s.pids.lookups(driver)
		}
		s.pods.setHidden(s.hidden)
		// MIG instance lists first: the kubelet's allocations are resolved against them.
		for _, d := range devices {
			lost.merge(s.refreshMIGIfDue(d))
		}
		s.pods.resolve(devices)
		for _, d := range devices {
			lost.merge(s.scrapeGPU(d, driver, ts))
		}
		s.states.retain(devices)
	})
	if lost.gpus > 0 && lost.driverGone == lost.gpus {
		// Every GPU says the driver under the library is gone: hold nothing of it, so an
		// upgrade can unload it, and load the library afresh once a driver answers.
		s.sess.Release(errors.Join(lost.errs...))
		_ = s.mb.Emit() // what this scrape began holds no reading
		return pmetric.NewMetrics(), nil
	}
	if errors.Is(err, nvmlx.ErrDown) {
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
	// gpus counts the GPUs whose memory was read, driverGone those that answered that the
	// driver is gone (nvmlx.DriverGone).
	gpus, driverGone int
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
	l.gpus += o.gpus
	l.driverGone += o.driverGone
}

// refreshMIGIfDue reads a GPU's MIG mode and instances when they are due to be read again.
func (s *metricsScraper) refreshMIGIfDue(d *nvmlx.Device) scrapeLoss {
	var refresh scrapeLoss
	if d.Lost() || !d.MIGDue() {
		return refresh
	}
	refresh.add(0, d.RefreshMIG(s.logger))
	refresh.noteLoss(d, s.logger) // GPU_IS_LOST reading the MIG state: the warning stands for it
	return refresh
}

// scrapeGPU records a GPU and, in MIG mode, each of its MIG instances as a resource of its
// own, and returns what could not be recorded.
func (s *metricsScraper) scrapeGPU(d *nvmlx.Device, driver string, ts pcommon.Timestamp) scrapeLoss {
	var lost scrapeLoss
	if d.Lost() {
		// Not called until a re-enumeration finds it answering (see Session.MaybeRediscover).
		describe(s.mb.StartResource(), d, driver)
		recordStatus(s.mb, d, s.states.of(d), ts)
		recordXids(s.mb, d, ts)
		lost.lostGPUs++
		return lost
	}
	lost.merge(s.scrapeDevice(d, driver, ts))
	if len(d.MIGInstances()) == 0 || d.Lost() {
		return lost
	}
	type instanceLoss struct {
		inst *nvmlx.Device
		lost scrapeLoss
	}
	var failed []instanceLoss
	for _, inst := range d.MIGInstances() {
		if l := s.scrapeDevice(inst, driver, ts); len(l.errs) > 0 {
			failed = append(failed, instanceLoss{inst, l})
		}
	}
	if failed == nil {
		return lost
	}
	// A MIG handle that fails most likely belongs to an instance destroyed by a
	// reconfiguration: read the instance list now. An instance that is gone is not an error.
	refreshErr := d.RefreshMIG(s.logger)
	for _, f := range failed {
		if d.Gone(f.inst) {
			s.logger.Debug("MIG instance went away during the scrape", zap.String("mig_device", f.inst.UUID), zap.Error(f.lost.errs[0]))
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
func (s *metricsScraper) scrapeDevice(d *nvmlx.Device, driver string, ts pcommon.Timestamp) scrapeLoss {
	var lost scrapeLoss
	describe(s.mb.StartResource(), d, driver)
	st := s.states.of(d)

	mem, memOK, n, err := recordMemory(s.mb, s.guard, d, &st.memory, ts)
	lost.add(n, err)
	if d.Parent == nil {
		lost.gpus++
		if nvmlx.DriverGone(err) {
			lost.driverGone++
		}
	}
	if s.wantProcesses() && !d.MIGEnabled() {
		lost.add(s.recordProcessesOf(d, &st.processes, ts, mem, memOK))
	}
	s.observeRunway(d, driver, ts, mem, memOK)
	s.pods.recordDevice(s.mb, d, driver, ts)
	s.guard.settle(s.mb, d, ts)
	if d.Parent != nil {
		recordXids(s.mb, d, ts) // Xid lines that name this MIG instance
		lost.noteLoss(d, s.logger)
		return lost
	}
	lost.add(recordRetiredPages(s.mb, d, &st.retired, ts))
	lost.add(recordRemappedRows(s.mb, d, &st.remapped, ts))
	lost.add(recordECC(s.mb, d, &st.ecc, ts))
	recordXids(s.mb, d, ts)
	lost.add(recordUtilization(s.mb, d, &st.utilization, ts))
	lost.add(s.recordProcessUtilization(d, &st.processUtil, ts))
	lost.add(recordModes(s.mb, d, &st.modes, ts))
	if s.pids != nil && s.pids.checked() && s.wantProcesses() {
		s.mb.RecordInt(metadata.NvidiaGpuProcessHidden, ts, boolInt(s.hidden))
	}
	lost.noteLoss(d, s.logger)
	recordStatus(s.mb, d, st, ts)
	return lost
}

// noteLoss marks the device's GPU lost when a call answered GPU_IS_LOST; the one warning
// stands for those errors, which are dropped.
func (l *scrapeLoss) noteLoss(d *nvmlx.Device, logger *zap.Logger) {
	kept := l.errs[:0]
	found := false
	for _, err := range l.errs {
		if nvmlx.IsLost(err) {
			d.MarkLost(err.Error(), logger)
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

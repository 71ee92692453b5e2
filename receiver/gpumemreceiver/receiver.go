package gpumemreceiver

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/podresources"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/procfs"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// gpuMemReceiver is the one instance per component ID that the metrics scraper (and the Xid
// log source) share: one NVML session, one device list.
type gpuMemReceiver struct {
	cfg *Config
	set receiver.Settings
	now func() time.Time

	// newBackend builds the nvml.Interface and the proc tree; replaced in tests.
	newBackend func(*Config) (node.Node, error)
	// retryMin overrides the first NVML init retry delay; tests shorten it.
	retryMin time.Duration
	// xidTicker paces the Xid merge; nil is a real ticker, tests tick by hand.
	xidTicker func(time.Duration) (<-chan time.Time, func())

	// nextLogs receives Xid records; nil when the receiver is in no logs pipeline.
	nextLogs consumer.Logs

	sess    *nvmlx.Session
	backend node.Node
	// pidNS is the collector's PID namespace and what it hides (pidnamespace.go).
	pidNS *pidNamespace
	// kubelet is the node's kubelet as a source of pod allocations and names; nil when
	// neither kubernetes.pod_resources_socket nor pod_logs_dir is set.
	kubelet  *podresources.Source
	scraper  *metricsScraper
	xids     *xidsource.Source
	xidTel   *xidTelemetry
	switches *metadata.ResourceSwitches
}

func newGPUMemReceiver(cfg *Config, set receiver.Settings) *gpuMemReceiver {
	return &gpuMemReceiver{cfg: cfg, set: set, now: time.Now, newBackend: defaultBackend}
}

func defaultBackend(cfg *Config) (node.Node, error) {
	return node.New(cfg.backendConfig())
}

// Start builds the backend and opens the NVML session. Nothing touches the outside world
// before this.
func (r *gpuMemReceiver) Start(ctx context.Context, host component.Host) error {
	b, err := r.newBackend(r.cfg)
	if err != nil {
		return err
	}
	r.backend = b
	if r.xidTel, err = newXidTelemetry(r.set); err != nil {
		return err
	}
	r.sess = nvmlx.NewSession(b.Lib, r.cfg.backendConfig().LibraryName(), r.set.Logger)
	r.sess.Verify = b.Verify
	r.pidNS = &pidNamespace{res: b.PIDNamespace, procRoot: r.cfg.Processes.ProcRoot, logger: r.set.Logger}
	r.pidNS.logStart()
	r.sess.Degraded = r.pidNS.degraded
	if r.retryMin > 0 {
		r.sess.RetryMin = r.retryMin
	}
	r.switches = metadata.NewResourceSwitches(r.cfg.ResourceAttributes)
	if b.PodResourcesSocket != "" || b.PodLogsDir != "" {
		r.kubelet = podresources.NewSource(podresources.Options{
			SocketPath: b.PodResourcesSocket, PodLogsDir: b.PodLogsDir,
			RefreshInterval: r.cfg.Kubernetes.RefreshInterval, Logger: r.set.Logger, Now: r.now,
		})
		// The first List, so the first scrape has allocations; bounded by the call timeout,
		// and an absent socket is no error (one INFO line, allocations off).
		_ = r.kubelet.Start(ctx)
	}
	r.scraper = r.newScraper()
	r.sess.Start(reportTo(host))
	r.xids = xidsource.New(xidsource.Options{
		Sess: r.sess, Lib: b.Lib, KmsgPath: b.KmsgPath, NVMLWatch: r.cfg.Xid.NVMLEvents, Boot: b.Boot,
		Logger: r.set.Logger, Now: r.now, Emit: r.emitXids, Dropped: r.xidTel.drop,
		NewTicker: r.xidTicker,
	})
	r.xids.Start()
	return nil
}

// emitXids counts each occurrence for nvidia.gpu.xid.errors and sends the records on.
func (r *gpuMemReceiver) emitXids(events []xidsource.Event) {
	for i := range events {
		if d := events[i].Dev; d != nil {
			d.Xids.Add(events[i].Code)
			if events[i].Code == nvmlx.XidFallenOffTheBus {
				_ = r.sess.WithDevices(func(string, []*nvmlx.Device) {
					d.MarkLost(fmt.Sprintf("Xid %d (%s)", nvmlx.XidFallenOffTheBus, events[i].Source()), r.set.Logger)
				})
			}
		}
	}
	if r.nextLogs == nil {
		return
	}
	var driver string
	_ = r.sess.WithDevices(func(d string, _ []*nvmlx.Device) { driver = d })
	ld := xidLogs(events, driver, r.switches, r.set.BuildInfo.Version, pcommon.NewTimestampFromTime(r.now()))
	if err := r.xidTel.send(r.nextLogs, ld); err != nil {
		r.set.Logger.Warn("Xid records not accepted by the next consumer", zap.Int("records", ld.LogRecordCount()), zap.Error(err))
	}
}

// emitLogs sends records the scraper made (predicted OOMs, unexpected consumers) to the logs
// pipeline. Without one, each record's text goes to the collector's log instead: it is rare
// (one per episode) and the warning is worth more than the rule against logging it.
func (r *gpuMemReceiver) emitLogs(ld plog.Logs) {
	if r.nextLogs == nil {
		for _, rec := range logTexts(ld) {
			msg := "GPU out-of-memory predicted"
			if rec.event == metadata.LogEventNameProcessUnexpected {
				msg = "GPU memory held by a process the kubelet did not place there"
			}
			r.set.Logger.Warn(msg, zap.String("record", rec.body),
				zap.String("fix", "put gpu_mem in a logs pipeline to receive these as log records"))
		}
		return
	}
	if err := r.nextLogs.ConsumeLogs(context.Background(), ld); err != nil {
		r.set.Logger.Warn("GPU records not accepted by the next consumer", zap.Int("records", ld.LogRecordCount()), zap.Error(err))
	}
}

func (r *gpuMemReceiver) newScraper() *metricsScraper {
	s := &metricsScraper{
		sess:   r.sess,
		mb:     metadata.NewMetricsBuilder(r.cfg.MetricsBuilderConfig, pcommon.NewTimestampFromTime(r.now()), r.set.BuildInfo.Version),
		logger: r.set.Logger,
		now:    r.now,
		live:   map[uint32]struct{}{},
		pids:   r.pidNS,

		failures: newFailureLog(r.set.Logger, r.set.TelemetrySettings.MeterProvider),
		guard:    newReadingGuard(r.set.Logger),
	}
	if r.cfg.Runway.Enabled {
		s.runway = newRunwayTracker(r.cfg.Runway, r.cfg.CollectionInterval, r.switches, r.set.BuildInfo.Version, r.emitLogs)
	}
	if r.cfg.Processes.Enabled {
		s.procs = procfs.New(r.backend.ProcFS)
	}
	if r.kubelet != nil {
		s.pods = newPodTracker(r.kubelet, r.cfg.Processes.Enabled, r.switches, r.set.BuildInfo.Version, r.emitLogs, r.set.Logger)
	}
	return s
}

// Shutdown is safe without Start and more than once.
func (r *gpuMemReceiver) Shutdown(context.Context) error {
	if r.xids != nil {
		r.xids.Shutdown() // before the session: it waits on NVML through the gate
	}
	if r.sess != nil {
		r.sess.Shutdown()
	}
	if r.kubelet != nil {
		_ = r.kubelet.Shutdown(context.Background())
	}
	if r.backend.Stop != nil {
		r.backend.Stop()
		r.backend.Stop = nil
	}
	return nil
}

func (r *gpuMemReceiver) scrapeMetrics(ctx context.Context) (pmetric.Metrics, error) {
	if r.scraper == nil {
		return pmetric.NewMetrics(), nil
	}
	return r.scraper.scrape(ctx)
}

// reportTo turns the NVML session's reports into the component's status on host.
func reportTo(host component.Host) nvmlx.Report {
	return func(err error) {
		if err != nil {
			componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
			return
		}
		componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
}

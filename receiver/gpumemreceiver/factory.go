package gpumemreceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/gpumem/otelcol-gpumem/internal/sharedcomponent"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// receivers holds one instance per component ID, shared by the metrics and logs signals.
var receivers = sharedcomponent.NewMap[component.ID, *gpuMemReceiver]()

// NewFactory returns the gpu_mem receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
		receiver.WithLogs(createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	// OOMs and Xids are second-scale events: a 10 s or 60 s sample misses the ramp before a
	// failure, so the default is per second (an NVML memory query costs microseconds).
	cc.CollectionInterval = time.Second
	return &Config{
		ControllerConfig:     cc,
		MetricsBuilderConfig: metadata.DefaultMetricsBuilderConfig(),
		Backend:              node.NVML,
		Processes:            ProcessesConfig{Enabled: true, ProcRoot: "/proc"},
		Xid:                  XidConfig{NVMLEvents: true, KmsgPath: node.DefaultKmsgPath},
		// 15 min is time to act on a page; 10 min of history gives a fit that sees through
		// noise; 2 min of steady growth is the classifier's leak_min_duration default.
		Runway: RunwayConfig{Enabled: true, WarnBelow: 15 * time.Minute, Window: 10 * time.Minute, MinDuration: 2 * time.Minute},
		// The kubelet's own paths: a DaemonSet mounting them read-only at the same place
		// needs no configuration, and on a host that is no node both are simply absent.
		// 10 s keeps a new pod's allocation visible before its first OOM is likely, at one
		// List per 10 s (the kubelet answers from memory).
		Kubernetes: KubernetesConfig{PodResourcesSocket: node.DefaultPodResourcesSocket, PodLogsDir: node.DefaultPodLogsDir, RefreshInterval: 10 * time.Second},
	}
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	shared, err := receivers.LoadOrStore(set.ID, func() (*gpuMemReceiver, error) {
		return newGPUMemReceiver(c, set), nil
	})
	if err != nil {
		return nil, err
	}
	s, err := scraper.NewMetrics(shared.Unwrap.scrapeMetrics,
		scraper.WithStart(shared.Start),
		scraper.WithShutdown(shared.Shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&c.ControllerConfig, set, skipEmpty(next),
		scraperhelper.AddMetricsScraper(metadata.Type, s))
}

// skipEmpty keeps empty batches from the next consumer. The scraper controller sends what
// a scrape produced even when it is nothing (NVML down, no GPU), and exporters then log a
// retry or an empty request every interval; the receiver's status says why instead.
func skipEmpty(next consumer.Metrics) consumer.Metrics {
	return emptyFilter{next}
}

type emptyFilter struct{ consumer.Metrics }

func (f emptyFilter) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if md.ResourceMetrics().Len() == 0 {
		return nil
	}
	return f.Metrics.ConsumeMetrics(ctx, md)
}

// createLogs attaches the logs consumer to the shared instance: Xid records flow from the
// same NVML session the metrics use.
func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	c := cfg.(*Config)
	shared, err := receivers.LoadOrStore(set.ID, func() (*gpuMemReceiver, error) {
		return newGPUMemReceiver(c, set), nil
	})
	if err != nil {
		return nil, err
	}
	shared.Unwrap.nextLogs = next
	return shared, nil
}

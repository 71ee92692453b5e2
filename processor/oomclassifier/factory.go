package oomclassifier

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/gpumem/otelcol-gpumem/internal/sharedcomponent"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

// NewFactory returns the factory of the oom_classifier processor.
func NewFactory() processor.Factory {
	return (&factory{clock: realClock{}}).processorFactory()
}

func (f *factory) processorFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithMetrics(f.createMetrics, metadata.MetricsStability),
		processor.WithLogs(f.createLogs, metadata.LogsStability),
	)
}

// factory holds the live instances, one per component id, shared by the metrics and logs
// sides of that id. Each NewFactory has its own map, so tests do not see each other.
type factory struct {
	instances sharedcomponent.Refs[component.ID, *instance]
	clock     clock // time.Now and real timers; tests inject a fake
	hostNames hostNameChecks
}

func createDefaultConfig() component.Config {
	return &Config{
		// Long enough to see a leak ramp and the load that preceded the OOM; at 1 s and ~20
		// series per GPU it costs well under 1 MiB per GPU.
		Window: 15 * time.Minute,
		// A little over the receiver's 1 s collection interval: the metrics that cover an
		// OOM's moment are at most one collection (plus export latency) behind the log.
		DecisionWait: 1500 * time.Millisecond,
		// A gateway serving 128 eight-GPU nodes.
		MaxGPUs: 1024,
		// 64 MiB fits the smallest of our manifests: the agent's 512 MiB limit, where the
		// window then takes at most an eighth of the limit live (a quarter with the garbage
		// collector's headroom). It holds about 900 GPUs of 16 processes each for 15 minutes
		// (about 70 KiB a GPU compressed, BenchmarkBytesPerSample), so it binds before max_gpus only
		// on busy gateways, which raise it (deploy/README.md).
		MaxBytes: 64 << 20,
		// NTP keeps real clocks within milliseconds; minutes ahead is a broken clock. A few
		// minutes of slack still accepts nodes set a little wrong (and their data then
		// counts), while a point days ahead cannot rewrite the window.
		MaxClockSkew: 5 * time.Minute,
		// 0: derived from the window (one point a second plus a quarter for jitter).
		MaxSamplesPerGPU: 0,
		// The classifier's defaults, so that the YAML shows them; spec_totals entries given in
		// YAML add to or override the built-in table (maps merge when decoded).
		Thresholds: classify.DefaultThresholds(),
	}
}

// acquire returns the instance for the id, creating it with the first caller's settings.
func (f *factory) acquire(set processor.Settings, cfg component.Config) (*sharedcomponent.Ref[*instance], error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("create %s processor: unexpected config type %T", metadata.Type, cfg)
	}
	return f.instances.Acquire(set.ID, func() (*instance, error) {
		tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
		if err != nil {
			return nil, fmt.Errorf("create %s telemetry: %w", set.ID, err)
		}
		return newInstance(c, set.Logger, tb, f.clock), nil
	}, nil)
}

func (f *factory) createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	ref, err := f.acquire(set, cfg)
	if err != nil {
		return nil, err
	}
	ref.Value.metricsSide.Store(true)
	next = f.hostNames.metrics(set.ID, set.Logger, next) // hostname_warn.go
	return processorhelper.NewMetrics(ctx, set, cfg, next, ref.Value.processMetrics,
		// Observation only reads: downstream consumers may share the data without a copy.
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		processorhelper.WithShutdown(func(context.Context) error {
			ref.Release()
			return nil
		}))
}

func (f *factory) createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	ref, err := f.acquire(set, cfg)
	if err != nil {
		return nil, err
	}
	next = f.hostNames.logs(set.ID, set.Logger, next) // hostname_warn.go
	lp, err := newLogsProcessor(ctx, set, cfg, ref.Value, next, ref.Release)
	if err != nil {
		ref.Release()
		return nil, err
	}
	return lp, nil
}

package hostidentityprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/gpumem/otelcol-gpumem/internal/sharedcomponent"
	"github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor/internal/metadata"
)

// NewFactory returns the factory of the host_identity processor.
func NewFactory() processor.Factory {
	return (&factory{src: osSources()}).processorFactory()
}

// factory holds the live instances, one per component id, shared by that id's pipelines.
// Each NewFactory has its own map, so tests do not see each other.
type factory struct {
	instances sharedcomponent.Refs[component.ID, *instance]
	src       sources // the environment, the hostname and files; tests inject fakes
}

func (f *factory) processorFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(f.createTraces, metadata.TracesStability),
		processor.WithMetrics(f.createMetrics, metadata.MetricsStability),
		processor.WithLogs(f.createLogs, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	// No host_name: OTEL_RESOURCE_ATTRIBUTES, then the hostname, name a bare host. No
	// host.id: the system detector leaves it off by default too, and in a container
	// /etc/machine-id is the image's, not the node's.
	return &Config{}
}

// acquire returns the instance of the id, created with the first caller's settings.
func (f *factory) acquire(set processor.Settings, cfg component.Config) (*sharedcomponent.Ref[*instance], error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("create %s processor: unexpected config type %T", metadata.Type, cfg)
	}
	return f.instances.Acquire(set.ID, func() (*instance, error) {
		return newInstance(c, set.Logger, f.src), nil
	}, nil)
}

// options are the same for every signal: stamping writes to the resource, and Shutdown
// (safe without Start) releases this side's hold on the instance.
func options(ref *sharedcomponent.Ref[*instance]) []processorhelper.Option {
	return []processorhelper.Option{
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithStart(func(ctx context.Context, _ component.Host) error { return ref.Value.start(ctx) }),
		processorhelper.WithShutdown(func(context.Context) error {
			ref.Release()
			return nil
		}),
	}
}

func (f *factory) createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	ref, err := f.acquire(set, cfg)
	if err != nil {
		return nil, err
	}
	p, err := processorhelper.NewTraces(ctx, set, cfg, next, ref.Value.processTraces, options(ref)...)
	if err != nil {
		ref.Release()
		return nil, err
	}
	return p, nil
}

func (f *factory) createMetrics(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	ref, err := f.acquire(set, cfg)
	if err != nil {
		return nil, err
	}
	p, err := processorhelper.NewMetrics(ctx, set, cfg, next, ref.Value.processMetrics, options(ref)...)
	if err != nil {
		ref.Release()
		return nil, err
	}
	return p, nil
}

func (f *factory) createLogs(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	ref, err := f.acquire(set, cfg)
	if err != nil {
		return nil, err
	}
	p, err := processorhelper.NewLogs(ctx, set, cfg, next, ref.Value.processLogs, options(ref)...)
	if err != nil {
		ref.Release()
		return nil, err
	}
	return p, nil
}

package oomclassifier

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// instance is what one component id shares between its metrics side and its logs side: the
// metric window, the thresholds and the telemetry.
type instance struct {
	cfg        *Config
	logger     *zap.Logger
	store      *window.Store
	thresholds classify.Thresholds
	telemetry  *metadata.TelemetryBuilder
	clock      clock

	mu      sync.Mutex
	waiters map[chan struct{}]struct{} // logs sides holding batches, woken by new metrics
	bufPool sync.Pool                  // []window.Sample buffers for observation
}

func newInstance(cfg *Config, logger *zap.Logger, tb *metadata.TelemetryBuilder, clk clock) *instance {
	return &instance{
		clock:  clk,
		cfg:    cfg,
		logger: logger,
		store: window.New(window.Config{
			Window:           cfg.Window,
			MaxGPUs:          cfg.MaxGPUs,
			MaxSamplesPerGPU: maxSamples(cfg),
			// A GPU runs a handful of processes; MPS or many small workers reach dozens.
			MaxProcessesPerGPU: 256,
			// Xids come in bursts of a few; more than this per host in one window is a storm
			// whose newest events are the relevant ones.
			MaxXidsPerHost: 1024,
		}),
		thresholds: cfg.Thresholds,
		telemetry:  tb,
		waiters:    make(map[chan struct{}]struct{}),
		bufPool:    sync.Pool{New: func() any { return new([]window.Sample) }},
	}
}

// maxSamples derives the per-series cap from the window when it is not set: one point a
// second, the receiver's default interval, plus a quarter for jitter and duplicates.
func maxSamples(cfg *Config) int {
	if cfg.MaxSamplesPerGPU > 0 {
		return cfg.MaxSamplesPerGPU
	}
	return int(cfg.Window/time.Second)*5/4 + 1
}

// wake tells every logs side holding batches that the window has new data.
func (in *instance) wake() {
	in.mu.Lock()
	for ch := range in.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	in.mu.Unlock()
}

func (in *instance) addWaiter(ch chan struct{}) {
	in.mu.Lock()
	in.waiters[ch] = struct{}{}
	in.mu.Unlock()
}

func (in *instance) removeWaiter(ch chan struct{}) {
	in.mu.Lock()
	delete(in.waiters, ch)
	in.mu.Unlock()
}

// recordOverflow adds what the window's caps evicted to the telemetry; a state change worth a
// log line only the first time, so it is at Debug.
func (in *instance) recordOverflow(ctx context.Context, of window.Overflow) {
	for _, r := range [...]struct {
		reason string
		n      int
	}{
		{"gpu_evicted", of.GPUsEvicted}, {"samples_capped", of.SamplesCapped},
		{"process_evicted", of.ProcessesEvicted}, {"xid_capped", of.XidsCapped},
		{"label_rejected", of.LabelsRejected},
	} {
		if r.n > 0 {
			in.telemetry.WindowDropped.Add(ctx, int64(r.n), metric.WithAttributes(attribute.String("reason", r.reason)))
			in.logger.Debug("Metric window cap reached", zap.String("reason", r.reason), zap.Int("count", r.n))
		}
	}
}

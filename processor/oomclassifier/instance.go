package oomclassifier

import (
	"context"
	"sync"
	"sync/atomic"
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
	// predictions are the gpu_mem receiver's predicted-OOM records, leak evidence.
	predictions *predictions

	logLimit rateLimit // per overflow reason

	// metricsSide is set when this id was also created in a metrics pipeline (sides.go).
	metricsSide  atomic.Bool
	logsOnlyOnce sync.Once

	mu      sync.Mutex
	waiters map[chan struct{}]struct{} // logs sides holding batches, woken by new metrics
	bufPool sync.Pool                  // *observeBuf for observation
}

func newInstance(cfg *Config, logger *zap.Logger, tb *metadata.TelemetryBuilder, clk clock) *instance {
	if clk == nil {
		clk = realClock{}
	}
	return &instance{
		clock:  clk,
		cfg:    cfg,
		logger: logger,
		store: window.New(window.Config{
			Window:           cfg.Window,
			MaxGPUs:          cfg.MaxGPUs,
			MaxBytes:         cfg.MaxBytes,
			MaxSamplesPerGPU: maxSamples(cfg),
			// A GPU runs a handful of processes; MPS or many small workers reach dozens.
			MaxProcessesPerGPU: 256,
			// Xids come in bursts of a few; more than this per host in one window is a storm
			// whose newest events are the relevant ones.
			MaxXidsPerHost: 1024,
			// One per pod × container the kubelet gave the GPU: a time-sliced GPU with many
			// replicas in use reaches dozens; more is a misreport, and the newest are kept.
			MaxAllocationsPerGPU: 64,
			MaxAhead:             cfg.MaxClockSkew,
			Now:                  clk.Now,
		}),
		thresholds:  cfg.Thresholds,
		predictions: newPredictions(cfg.Window),
		telemetry:   tb,
		waiters:     make(map[chan struct{}]struct{}),
		bufPool:     sync.Pool{New: func() any { return new(observeBuf) }},
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

// recordOverflow adds what the window's caps evicted and its checks rejected to the telemetry,
// and logs each reason rate-limited: the first occurrence at once, then at most one line per
// logEvery with the count since the last line. Rejections are Warn (a sender is wrong), and
// so is a GPU evicted: its OOMs will match nothing, so the window is too small for the fleet.
// The other caps are Info (they trim a GPU's history as designed).
func (in *instance) recordOverflow(ctx context.Context, of window.Overflow) {
	for _, r := range [...]struct {
		reason string
		n      int
		warn   bool
		msg    string
		fix    string
	}{
		{"gpu_evicted", of.GPUsEvicted, true, "Metric window full: least recently updated GPUs evicted; their OOMs will match no GPU", "raise max_gpus or max_bytes (and the memory limit with them)"},
		{"samples_capped", of.SamplesCapped, false, "Metric window: oldest points of a series dropped at the per-series cap", "raise max_samples_per_gpu"},
		{"process_evicted", of.ProcessesEvicted, false, "Metric window: least recently updated processes of a GPU evicted", "more than 256 processes on one GPU are kept only in part"},
		{"allocation_evicted", of.AllocsEvicted, false, "Metric window: least recently seen GPU allocations evicted", "more than 64 pod allocations of one GPU are kept only in part"},
		{"xid_capped", of.XidsCapped, false, "Metric window: oldest Xid events of a host dropped at the per-host cap", "an Xid storm; the newest are kept"},
		{"label_rejected", of.LabelsRejected, false, "Metric window: label values beyond the per-stream cap rejected", "check the sender's retirement cause or remap type labels"},
		{"future_timestamp", of.FutureRejected, true, "Metric points stamped ahead of the collector's clock rejected", "fix the sender's clock, or raise max_clock_skew"},
		{"invalid_value", of.ValuesRejected, true, "Metric points with impossible values rejected (negative, NaN, Inf, above the GPU's limit)", "check the sender"},
	} {
		if r.n <= 0 {
			continue
		}
		in.telemetry.WindowDropped.Add(ctx, int64(r.n), metric.WithAttributes(attribute.String("reason", r.reason)))
		if total, ok := in.logLimit.add(r.reason, r.n, in.clock.Now()); ok {
			log := in.logger.Info
			if r.warn {
				log = in.logger.Warn
			}
			log(r.msg, zap.String("reason", r.reason), zap.Int("count", total), zap.String("fix", r.fix),
				zap.Duration("log_interval", logEvery), zap.Int("window_gpus", in.store.Len()),
				zap.Int64("window_bytes", in.store.Bytes()))
		}
	}
}

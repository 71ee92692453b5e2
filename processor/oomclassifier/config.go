package oomclassifier // import "github.com/gpumem/otelcol-gpumem/processor/oomclassifier"

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

// Config is the oom_classifier processor's configuration.
type Config struct {
	// Window is the metric history kept per GPU.
	Window time.Duration `mapstructure:"window"`
	// DecisionWait is how long a log batch holding an OOM may wait for the metrics that cover
	// its moment; 0 classifies at once.
	DecisionWait time.Duration `mapstructure:"decision_wait"`
	// MaxGPUs bounds the GPUs kept over all hosts; the least recently updated is evicted.
	MaxGPUs int `mapstructure:"max_gpus"`
	// MaxBytes bounds the heap the window takes, in bytes; past it the least recently
	// updated GPUs are evicted, as past MaxGPUs.
	MaxBytes int64 `mapstructure:"max_bytes"`
	// MaxSamplesPerGPU bounds the points kept per series of one GPU; 0 derives it from Window
	// (one point a second plus a quarter for jitter and duplicates).
	MaxSamplesPerGPU int `mapstructure:"max_samples_per_gpu"`
	// MaxClockSkew is how far past the collector's clock a timestamp may be: metric points
	// beyond are rejected (counted), OOM records beyond are placed at their observed time.
	MaxClockSkew time.Duration `mapstructure:"max_clock_skew"`
	// Thresholds tune the cause rules: the classifier's own struct, validated there.
	Thresholds classify.Thresholds `mapstructure:"thresholds"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// maxClockSkew bounds max_clock_skew: a point an hour ahead is a wrong clock, and believing it
// would hide an hour of real history behind it.
const maxClockSkew = time.Hour

// Bounds of max_bytes: below one GPU's full window (a 15-minute window of 256 processes
// takes about 1 MiB) the budget would evict the GPU being classified against; above 64 GiB
// is no budget a collector is given, most likely a unit mistaken.
const (
	minMaxBytes = int64(1) << 20
	maxMaxBytes = int64(64) << 30
)

// maxDecisionWait bounds decision_wait. The metrics that cover an OOM are at most one
// collection interval plus export latency behind its log (seconds; tens with an exporter's
// retries). Past a minute they are not late but absent (a host without the gpu_mem receiver),
// and waiting longer only delays that host's logs and enlarges what a SIGKILL loses.
const maxDecisionWait = time.Minute

// maxWindow bounds window: the rules look back minutes (leak_min_duration, xid_before), and a
// day at 1 s points already outgrows any per-GPU budget.
const maxWindow = 24 * time.Hour

// maxGPUs and maxPoints bound the counts: every GPU keeps ~20 series, so 2^30 points per
// series over all GPUs is ~80 GiB even at the window's ~4 bytes a point, beyond what a
// collector process holds; past that the caps no longer bound anything.
const (
	maxGPUs   = 1 << 20
	maxPoints = 1 << 30
)

// Validate checks the configuration; every error names its YAML key, all are reported at once.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Window <= 0 || cfg.Window > maxWindow {
		errs = append(errs, fmt.Errorf("'window' must be > 0 and <= %s, got %s", maxWindow, cfg.Window))
	} else {
		// A window shorter than a rule's look-back silently disables the rule.
		if lm := cfg.Thresholds.LeakMinDuration; cfg.Window < lm {
			errs = append(errs, fmt.Errorf("'window' (%s) must be at least 'thresholds.leak_min_duration' (%s), else no leak can match", cfg.Window, lm))
		}
		if xb := cfg.Thresholds.XidBefore; cfg.Window < xb {
			errs = append(errs, fmt.Errorf("'window' (%s) must be at least 'thresholds.xid_before' (%s), else earlier Xids are forgotten", cfg.Window, xb))
		}
	}
	if cfg.DecisionWait < 0 || cfg.DecisionWait > maxDecisionWait {
		errs = append(errs, fmt.Errorf("'decision_wait' must be >= 0 (0 classifies at once) and <= %s, got %s", maxDecisionWait, cfg.DecisionWait))
	}
	if cfg.MaxGPUs <= 0 || cfg.MaxGPUs > maxGPUs {
		errs = append(errs, fmt.Errorf("'max_gpus' must be > 0 and <= %d, got %d", maxGPUs, cfg.MaxGPUs))
	}
	if cfg.MaxBytes < minMaxBytes || cfg.MaxBytes > maxMaxBytes {
		errs = append(errs, fmt.Errorf("'max_bytes' must be in [%d, %d] (1 MiB to 64 GiB), got %d", minMaxBytes, maxMaxBytes, cfg.MaxBytes))
	}
	switch {
	case cfg.MaxSamplesPerGPU < 0 || cfg.MaxSamplesPerGPU > maxPoints:
		errs = append(errs, fmt.Errorf("'max_samples_per_gpu' must be >= 0 (0 derives it from 'window') and <= %d, got %d", maxPoints, cfg.MaxSamplesPerGPU))
	case cfg.MaxSamplesPerGPU > 0 && cfg.MaxSamplesPerGPU < cfg.Thresholds.LeakMinPoints:
		errs = append(errs, fmt.Errorf("'max_samples_per_gpu' (%d) must be at least 'thresholds.leak_min_points' (%d), else no leak can match",
			cfg.MaxSamplesPerGPU, cfg.Thresholds.LeakMinPoints))
	case cfg.MaxGPUs > 0 && cfg.MaxGPUs <= maxGPUs && cfg.Window > 0 && cfg.Window <= maxWindow &&
		int64(cfg.MaxGPUs)*int64(maxSamples(cfg)) > maxPoints:
		errs = append(errs, fmt.Errorf("'max_gpus' × 'max_samples_per_gpu' (%d × %d) must be <= %d points, more than a collector can hold",
			cfg.MaxGPUs, maxSamples(cfg), maxPoints))
	}
	if cfg.MaxClockSkew <= 0 || cfg.MaxClockSkew > maxClockSkew {
		errs = append(errs, fmt.Errorf("'max_clock_skew' must be in (0, %s], got %s", maxClockSkew, cfg.MaxClockSkew))
	}
	return errors.Join(errs...)
}

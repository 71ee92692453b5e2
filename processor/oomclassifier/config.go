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

// Validate checks the configuration; every error names its YAML key.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.Window <= 0 {
		errs = append(errs, errors.New("'window' must be > 0"))
	}
	if cfg.DecisionWait < 0 {
		errs = append(errs, errors.New("'decision_wait' must be >= 0 (0 classifies at once)"))
	}
	if cfg.MaxGPUs <= 0 {
		errs = append(errs, errors.New("'max_gpus' must be > 0"))
	}
	if cfg.MaxBytes < minMaxBytes || cfg.MaxBytes > maxMaxBytes {
		errs = append(errs, fmt.Errorf("'max_bytes' must be in [%d, %d] (1 MiB to 64 GiB)", minMaxBytes, maxMaxBytes))
	}
	if cfg.MaxSamplesPerGPU < 0 {
		errs = append(errs, errors.New("'max_samples_per_gpu' must be >= 0 (0 derives it from 'window')"))
	}
	if cfg.MaxClockSkew <= 0 || cfg.MaxClockSkew > maxClockSkew {
		errs = append(errs, fmt.Errorf("'max_clock_skew' must be in (0, %s]", maxClockSkew))
	}
	return errors.Join(errs...)
}

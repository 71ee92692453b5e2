package oomclassifier // import "github.com/gpumem/otelcol-gpumem/processor/oomclassifier"

import (
	"errors"
	"fmt"
	"time"
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
	// MaxSamplesPerGPU bounds the points kept per series of one GPU; 0 derives it from Window
	// (one point a second plus a quarter for jitter and duplicates).
	MaxSamplesPerGPU int `mapstructure:"max_samples_per_gpu"`
	// Thresholds tune the cause rules.
	Thresholds ThresholdsConfig `mapstructure:"thresholds"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ThresholdsConfig exposes the main thresholds of the cause rules (DESIGN.md §3); the rest
// keep the classifier's defaults. Byte values are plain byte counts, fractions of capacity
// are in (0, 1].
type ThresholdsConfig struct {
	MaxSampleAge            time.Duration    `mapstructure:"max_sample_age"`
	XidBefore               time.Duration    `mapstructure:"xid_before"`
	XidAfter                time.Duration    `mapstructure:"xid_after"`
	ZombieMinBytes          int64            `mapstructure:"zombie_min_bytes"`
	ZombieMinFraction       float64          `mapstructure:"zombie_min_fraction"`
	TenantMinBytes          int64            `mapstructure:"tenant_min_bytes"`
	TenantMinFraction       float64          `mapstructure:"tenant_min_fraction"`
	WorkerMinCount          int              `mapstructure:"worker_min_count"`
	WorkerMaxBytes          int64            `mapstructure:"worker_max_bytes"`
	WorkerMinFraction       float64          `mapstructure:"worker_min_fraction"`
	FragmentationMinBytes   int64            `mapstructure:"fragmentation_min_bytes"`
	FragmentationMinFrac    float64          `mapstructure:"fragmentation_min_fraction"`
	LeakMinDuration         time.Duration    `mapstructure:"leak_min_duration"`
	LeakMinPoints           int              `mapstructure:"leak_min_points"`
	LeakMinSlopeBytesPerSec float64          `mapstructure:"leak_min_slope_bytes_per_second"`
	LeakMinGrowthFraction   float64          `mapstructure:"leak_min_growth_fraction"`
	LeakMinR2               float64          `mapstructure:"leak_min_r2"`
	RetiredPageBytes        int64            `mapstructure:"retired_page_bytes"`
	SpecShortfallFraction   float64          `mapstructure:"spec_shortfall_fraction"`
	SpecTotals              map[string]int64 `mapstructure:"spec_totals"`
	FullFraction            float64          `mapstructure:"full_fraction"`
	DenseFraction           float64          `mapstructure:"dense_fraction"`
}

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
	if cfg.MaxSamplesPerGPU < 0 {
		errs = append(errs, errors.New("'max_samples_per_gpu' must be >= 0 (0 derives it from 'window')"))
	}
	return errors.Join(errs...)
}

// Validate checks the thresholds; the collector prefixes the errors with "thresholds".
func (t *ThresholdsConfig) Validate() error {
	var errs []error
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("'%s' must be > 0", key))
		}
	}
	nonNegative := func(key string, b int64) {
		if b < 0 {
			errs = append(errs, fmt.Errorf("'%s' must be >= 0", key))
		}
	}
	fraction := func(key string, f float64) {
		if !(f > 0 && f <= 1) {
			errs = append(errs, fmt.Errorf("'%s' must be in (0, 1], got %v", key, f))
		}
	}
	positive("max_sample_age", t.MaxSampleAge)
	positive("leak_min_duration", t.LeakMinDuration)
	if t.LeakMinPoints < 3 {
		errs = append(errs, fmt.Errorf("'leak_min_points' must be >= 3 (a line through fewer says nothing), got %d", t.LeakMinPoints))
	}
	if t.XidBefore < 0 {
		errs = append(errs, errors.New("'xid_before' must be >= 0"))
	}
	if t.XidAfter < 0 {
		errs = append(errs, errors.New("'xid_after' must be >= 0"))
	}
	nonNegative("zombie_min_bytes", t.ZombieMinBytes)
	nonNegative("tenant_min_bytes", t.TenantMinBytes)
	nonNegative("worker_max_bytes", t.WorkerMaxBytes)
	nonNegative("fragmentation_min_bytes", t.FragmentationMinBytes)
	if t.RetiredPageBytes <= 0 {
		errs = append(errs, errors.New("'retired_page_bytes' must be > 0"))
	}
	if t.WorkerMinCount < 1 {
		errs = append(errs, errors.New("'worker_min_count' must be >= 1"))
	}
	if t.LeakMinSlopeBytesPerSec < 0 {
		errs = append(errs, errors.New("'leak_min_slope_bytes_per_second' must be >= 0"))
	}
	fraction("zombie_min_fraction", t.ZombieMinFraction)
	fraction("tenant_min_fraction", t.TenantMinFraction)
	fraction("worker_min_fraction", t.WorkerMinFraction)
	fraction("fragmentation_min_fraction", t.FragmentationMinFrac)
	fraction("leak_min_growth_fraction", t.LeakMinGrowthFraction)
	fraction("leak_min_r2", t.LeakMinR2)
	fraction("spec_shortfall_fraction", t.SpecShortfallFraction)
	fraction("full_fraction", t.FullFraction)
	fraction("dense_fraction", t.DenseFraction)
	for name, b := range t.SpecTotals {
		if b <= 0 {
			errs = append(errs, fmt.Errorf("'spec_totals' entry %q must be > 0", name))
		}
	}
	return errors.Join(errs...)
}

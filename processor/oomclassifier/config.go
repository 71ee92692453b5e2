package oomclassifier // import "github.com/gpumem/otelcol-gpumem/processor/oomclassifier"

import (
	"errors"
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
	// MaxSamplesPerGPU bounds the points kept per series of one GPU; 0 derives it from Window
	// (one point a second plus a quarter for jitter and duplicates).
	MaxSamplesPerGPU int `mapstructure:"max_samples_per_gpu"`
	// Thresholds tune the cause rules: the classifier's own struct, validated there.
	Thresholds classify.Thresholds `mapstructure:"thresholds"`

	// prevent unkeyed literal initialization
	_ struct{}
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

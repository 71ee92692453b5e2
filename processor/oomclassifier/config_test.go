package oomclassifier

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := createDefaultConfig().(*Config)
	custom.Window = 30 * time.Minute
	custom.DecisionWait = 3 * time.Second
	custom.MaxGPUs = 64
	custom.MaxSamplesPerGPU = 2400
	custom.MaxBytes = 8 << 20
	custom.MaxClockSkew = time.Minute
	custom.Thresholds.ZombieMinBytes = 2 << 30
	custom.Thresholds.TenantMinFraction = 0.2
	custom.Thresholds.LeakMinDuration = 5 * time.Minute
	custom.Thresholds.SpecTotals["NVIDIA H100 80GB HBM3"] = 85520809984 // merged into the built-in table

	immediate := createDefaultConfig().(*Config)
	immediate.DecisionWait = 0

	tests := []struct {
		id      component.ID
		want    component.Config
		wantErr string // the YAML key the error must quote
	}{
		{id: component.NewID(metadata.Type), want: createDefaultConfig()},
		{id: component.NewIDWithName(metadata.Type, "custom"), want: custom},
		{id: component.NewIDWithName(metadata.Type, "immediate"), want: immediate},
		{id: component.NewIDWithName(metadata.Type, "bad_window"), wantErr: "'window' must be > 0"},
		{id: component.NewIDWithName(metadata.Type, "bad_decision_wait"), wantErr: "'decision_wait' must be >= 0"},
		{id: component.NewIDWithName(metadata.Type, "bad_max_gpus"), wantErr: "'max_gpus' must be > 0"},
		{id: component.NewIDWithName(metadata.Type, "bad_max_samples"), wantErr: "'max_samples_per_gpu' must be >= 0"},
		{id: component.NewIDWithName(metadata.Type, "bad_max_bytes"), wantErr: "'max_bytes' must be in [1048576, 68719476736]"},
		{id: component.NewIDWithName(metadata.Type, "huge_max_bytes"), wantErr: "'max_bytes' must be in"},
		{id: component.NewIDWithName(metadata.Type, "bad_max_clock_skew"), wantErr: "'max_clock_skew' must be in (0, 1h0m0s]"},
		{id: component.NewIDWithName(metadata.Type, "huge_max_clock_skew"), wantErr: "'max_clock_skew' must be in"},
		{id: component.NewIDWithName(metadata.Type, "long_window"), wantErr: "'window' must be > 0 and <= 24h0m0s, got 25h0m0s"},
		{id: component.NewIDWithName(metadata.Type, "window_below_leak"), wantErr: "'window' (2m0s) must be at least 'thresholds.leak_min_duration' (5m0s)"},
		{id: component.NewIDWithName(metadata.Type, "window_below_xid_before"), wantErr: "'window' (4m0s) must be at least 'thresholds.xid_before' (5m0s)"},
		{id: component.NewIDWithName(metadata.Type, "long_decision_wait"), wantErr: "'decision_wait' must be >= 0 (0 classifies at once) and <= 1m0s, got 1000h0m0s"},
		{id: component.NewIDWithName(metadata.Type, "huge_max_gpus"), wantErr: "'max_gpus' must be > 0 and <= 1048576, got 100000000"},
		{id: component.NewIDWithName(metadata.Type, "huge_max_samples"), wantErr: "'max_samples_per_gpu' must be >= 0 (0 derives it from 'window') and <= 1073741824, got 2000000000"},
		{id: component.NewIDWithName(metadata.Type, "samples_below_leak_points"), wantErr: "'max_samples_per_gpu' (10) must be at least 'thresholds.leak_min_points' (20)"},
		{id: component.NewIDWithName(metadata.Type, "too_many_points"), wantErr: "'max_gpus' × 'max_samples_per_gpu' (1000000 × 10000) must be <= 1073741824 points"},
		{id: component.NewIDWithName(metadata.Type, "long_clock_skew"), wantErr: "'max_clock_skew' must be in (0, 1h0m0s], got 2h0m0s"},
		{id: component.NewIDWithName(metadata.Type, "bad_fraction"), wantErr: "'zombie_min_fraction' must be in (0, 1]"},
		{id: component.NewIDWithName(metadata.Type, "bad_worker_count"), wantErr: "'worker_min_count' must be >= 1"},
		{id: component.NewIDWithName(metadata.Type, "bad_spec_total"), wantErr: "'spec_totals' entry \"Broken GPU\" must be > 0"},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

// Every wrong key is reported in one go, each naming its key.
func TestAllConfigErrorsAtOnce(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "many_wrong").String())
	require.NoError(t, err)
	cfg := createDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	err = confmap.Validate(cfg)
	require.Error(t, err)
	for _, key := range []string{"'window'", "'decision_wait'", "'max_gpus'", "'max_samples_per_gpu'", "'max_clock_skew'"} {
		assert.Contains(t, err.Error(), key)
	}
}

// The bounds accept the largest values they name.
func TestConfigBoundsAreInclusive(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Window = maxWindow
	cfg.DecisionWait = maxDecisionWait
	cfg.MaxClockSkew = maxClockSkew
	cfg.MaxGPUs = 1 << 10
	cfg.MaxSamplesPerGPU = maxPoints >> 10
	require.NoError(t, cfg.Validate())
	cfg.MaxGPUs, cfg.MaxSamplesPerGPU = maxGPUs, maxPoints/maxGPUs
	assert.NoError(t, cfg.Validate())
	cfg.MaxSamplesPerGPU++ // 2^20 × 1025 > 2^30
	assert.ErrorContains(t, cfg.Validate(), "'max_gpus' × 'max_samples_per_gpu'")
}

func TestNestedErrorsNameThePath(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Thresholds.DenseFraction = 0
	err := confmap.Validate(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "thresholds")
	assert.Contains(t, err.Error(), "'dense_fraction'")
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.NoError(t, componenttest.CheckConfigStruct(cfg))
	assert.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, 15*time.Minute, cfg.Window)
	assert.Equal(t, 1126, maxSamples(cfg), "15 min at 1 s plus a quarter")
	assert.NotEmpty(t, cfg.Thresholds.SpecTotals, "built-in spec table kept")
}

func TestSpecTotalsAddToBuiltIn(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"thresholds": map[string]any{"spec_totals": map[string]any{"My GPU": 1 << 30}},
	}).Unmarshal(cfg))
	th := newInstance(cfg, zap.NewNop(), nil, realClock{}).thresholds
	assert.Equal(t, int64(1<<30), th.SpecTotals["My GPU"])
	assert.Equal(t, classify.DefaultThresholds().SpecTotals["NVIDIA H200"], th.SpecTotals["NVIDIA H200"], "built-in entries kept")
}

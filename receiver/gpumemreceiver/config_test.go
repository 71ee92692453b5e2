package gpumemreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.MustNewIDWithName(metadata.Type.String(), name).String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(t, "")
	require.NoError(t, err)
	assert.Equal(t, createDefaultConfig(), cfg)
	assert.Equal(t, time.Second, cfg.CollectionInterval)
	assert.Equal(t, "nvml", cfg.Backend)
	assert.Equal(t, "/proc", cfg.Processes.ProcRoot)
	assert.Equal(t, "/dev/kmsg", cfg.Xid.KmsgPath)
	assert.Equal(t, RunwayConfig{Enabled: true, WarnBelow: 15 * time.Minute, Window: 10 * time.Minute, MinDuration: 2 * time.Minute}, cfg.Runway)
	assert.Equal(t, KubernetesConfig{
		PodResourcesSocket: "/var/lib/kubelet/pod-resources/kubelet.sock", PodLogsDir: "/var/log/pods", RefreshInterval: 10 * time.Second,
	}, cfg.Kubernetes, "the kubelet's own paths")

	cfg, err = loadConfig(t, "custom")
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, cfg.CollectionInterval)
	assert.Equal(t, "simulated", cfg.Backend)
	assert.Equal(t, "../../testdata/scenarios/leak.yaml", cfg.Simulated.Scenario)
	assert.Equal(t, "/tmp/gpumem-logs", cfg.Simulated.LogDir)
	assert.Equal(t, "/host/proc", cfg.Processes.ProcRoot)
	assert.False(t, cfg.Xid.NVMLEvents)
	assert.Empty(t, cfg.Xid.KmsgPath)
	assert.Equal(t, RunwayConfig{Enabled: true, WarnBelow: 30 * time.Minute, Window: 20 * time.Minute, MinDuration: 5 * time.Minute}, cfg.Runway)
	assert.Equal(t, KubernetesConfig{PodResourcesSocket: "/host/kubelet/pod-resources/kubelet.sock", RefreshInterval: 30 * time.Second}, cfg.Kubernetes)
	assert.False(t, cfg.Metrics["nvidia.gpu.process.memory.usage"].Enabled)
	assert.True(t, cfg.Metrics["hw.gpu.utilization"].Enabled, "an empty switch keeps the default")
	assert.True(t, cfg.Metrics["hw.gpu.memory.usage"].Enabled, "untouched switches keep the default")
	assert.False(t, cfg.ResourceAttributes["hw.serial_number"].Enabled)
	assert.True(t, cfg.ResourceAttributes["hw.id"].Enabled)
}

// Every error names the YAML key the user has to fix.
func TestConfigErrorsNameTheirKey(t *testing.T) {
	for name, want := range map[string]string{
		"bad_backend":                "'backend' must be \"nvml\" or \"simulated\", got \"cuda\"",
		"bad_interval":               "'collection_interval' must be at least 100ms",
		"bad_proc_root":              "'processes.proc_root' must not be empty",
		"bad_initial_delay":          "'initial_delay' must be >= 0, got -5s",
		"scenario_without_simulated": "'simulated' is only used with 'backend: simulated'",
		"unknown_metric":             "unknown metric \"hw.gpu.memory.used\"",
		"unknown_key":                "colection_interval",
		"bad_runway":                 "'runway.warn_below' must be > 0, got 0s",
		"bad_runway_window":          "'runway.window' / 'collection_interval' must be at most 7200 samples, got 36000",
		"bad_pod_refresh":            "'kubernetes.refresh_interval' must be between 1s and 10m0s, got 100ms",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(t, name)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
	// Every problem at once, each naming its key.
	_, err := loadConfig(t, "bad_runway")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "'runway.min_duration' (11m0s) must not exceed 'runway.window' (10m0s)")
	// A switched-off forecast is not validated.
	_, err = loadConfig(t, "runway_off")
	require.NoError(t, err)
	// Neither Kubernetes source: the interval is not read.
	_, err = loadConfig(t, "kubernetes_off")
	require.NoError(t, err)
}

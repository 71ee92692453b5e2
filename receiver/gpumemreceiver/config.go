package gpumemreceiver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// Config is the gpu_mem receiver's configuration.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// Backend is nvml (the driver's libnvidia-ml) or simulated (a scenario replay).
	Backend string `mapstructure:"backend"`
	// LibraryPath is the NVML library to load; empty means the loader's default (libnvidia-ml.so.1).
	LibraryPath string           `mapstructure:"library_path"`
	Simulated   SimulatedConfig  `mapstructure:"simulated"`
	Processes   ProcessesConfig  `mapstructure:"processes"`
	Xid         XidConfig        `mapstructure:"xid"`
	Runway      RunwayConfig     `mapstructure:"runway"`
	Kubernetes  KubernetesConfig `mapstructure:"kubernetes"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// SimulatedConfig configures backend: simulated.
type SimulatedConfig struct {
	// Scenario is a scenario file; empty runs the built-in scenario.
	Scenario string `mapstructure:"scenario"`
	// LogDir is where the scenario's application log lines (log_lines) are written, for a
	// file_log receiver to read; empty writes none.
	LogDir string `mapstructure:"log_dir"`
}

// ProcessesConfig configures the per-process metrics (memory and utilization).
type ProcessesConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// ProcRoot is where the host's /proc is visible (/host/proc inside a container).
	ProcRoot string `mapstructure:"proc_root"`
}

// XidConfig configures Xid event sources.
type XidConfig struct {
	NVMLEvents bool   `mapstructure:"nvml_events"`
	KmsgPath   string `mapstructure:"kmsg_path"`
}

// RunwayConfig configures the memory runway forecast (documentation.md, "Memory runway").
type RunwayConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// WarnBelow: a runway below this starts an episode, announced by one
	// nvidia.gpu.memory.oom_predicted log record.
	WarnBelow time.Duration `mapstructure:"warn_below"`
	// Window is how much of each device's and process's history the fit sees.
	Window time.Duration `mapstructure:"window"`
	// MinDuration is how long growth must have been steady before a runway is given.
	MinDuration time.Duration `mapstructure:"min_duration"`
}

// KubernetesConfig configures where the receiver learns which pod each GPU and process
// belongs to (documentation.md, "Kubernetes").
type KubernetesConfig struct {
	// PodResourcesSocket is the kubelet's PodResources API (v1) socket; "" disables it. A
	// socket that is absent (not a Kubernetes node, or not mounted) turns the source off with
	// one INFO line.
	PodResourcesSocket string `mapstructure:"pod_resources_socket"`
	// PodLogsDir is the kubelet's pod log directory: its <namespace>_<pod>_<uid> names give a
	// process's pod (known by uid from its cgroup) its name; "" disables.
	PodLogsDir string `mapstructure:"pod_logs_dir"`
	// RefreshInterval is how often the allocations and pod names are read again; scrapes in
	// between use the cached answer.
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`
}

// Bounds of kubernetes.refresh_interval: a List costs the kubelet a walk of every pod, so
// not more than once a second; and an allocation older than 10 minutes misleads.
const (
	minPodRefresh = time.Second
	maxPodRefresh = 10 * time.Minute
)

func (k *KubernetesConfig) validate() []error {
	if k.PodResourcesSocket == "" && k.PodLogsDir == "" {
		return nil
	}
	if k.RefreshInterval < minPodRefresh || k.RefreshInterval > maxPodRefresh {
		return []error{fmt.Errorf("'kubernetes.refresh_interval' must be between %s and %s, got %s", minPodRefresh, maxPodRefresh, k.RefreshInterval)}
	}
	return nil
}

// maxRunwayPoints bounds each history the runway keeps: 2 h of 1 s samples.
const maxRunwayPoints = 7200

// Validate checks the receiver's own keys; the controller settings validate themselves.
func (cfg *Config) Validate() error {
	var errs []error
	switch cfg.Backend {
	case node.NVML:
		if cfg.Simulated.Scenario != "" || cfg.Simulated.LogDir != "" {
			errs = append(errs, errors.New("'simulated' is only used with 'backend: simulated'"))
		}
	case node.Simulated:
	default:
		errs = append(errs, fmt.Errorf("'backend' must be %q or %q, got %q", node.NVML, node.Simulated, cfg.Backend))
	}
	if cfg.CollectionInterval < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("'collection_interval' must be at least 100ms, got %s", cfg.CollectionInterval))
	}
	// scraperhelper reads a negative delay as "start at once"; written in a config it is a
	// typo or a sign slip, so it is refused rather than silently reinterpreted.
	if cfg.InitialDelay < 0 {
		errs = append(errs, fmt.Errorf("'initial_delay' must be >= 0, got %s", cfg.InitialDelay))
	}
	if cfg.Processes.Enabled && cfg.Processes.ProcRoot == "" {
		errs = append(errs, errors.New("'processes.proc_root' must not be empty when 'processes.enabled' is true"))
	}
	errs = append(errs, cfg.Runway.validate(cfg.CollectionInterval)...)
	errs = append(errs, cfg.Kubernetes.validate()...)
	return errors.Join(errs...)
}

// backendConfig is what the driver layer needs of the configuration to build the backend.
func (cfg *Config) backendConfig() node.Config {
	return node.Config{
		Kind: cfg.Backend, LibraryPath: cfg.LibraryPath, ProcRoot: cfg.Processes.ProcRoot,
		KmsgPath: cfg.Xid.KmsgPath, Scenario: cfg.Simulated.Scenario, LogDir: cfg.Simulated.LogDir,
		PodResourcesSocket: cfg.Kubernetes.PodResourcesSocket, PodLogsDir: cfg.Kubernetes.PodLogsDir,
	}
}

func (r *RunwayConfig) validate(interval time.Duration) []error {
	if !r.Enabled {
		return nil
	}
	var errs []error
	for _, d := range [...]struct {
		key string
		v   time.Duration
	}{{"runway.warn_below", r.WarnBelow}, {"runway.window", r.Window}, {"runway.min_duration", r.MinDuration}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("'%s' must be > 0, got %s", d.key, d.v))
		}
	}
	if r.MinDuration > r.Window {
		errs = append(errs, fmt.Errorf("'runway.min_duration' (%s) must not exceed 'runway.window' (%s)", r.MinDuration, r.Window))
	}
	if interval > 0 && r.Window/interval > maxRunwayPoints {
		errs = append(errs, fmt.Errorf("'runway.window' / 'collection_interval' must be at most %d samples, got %d", maxRunwayPoints, r.Window/interval))
	}
	return errs
}

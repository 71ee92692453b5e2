package classify

import "time"

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// Thresholds holds every threshold of every rule. Start from DefaultThresholds and
// override what a fleet needs; zero values are not defaults. It is also the processor's
// `thresholds` configuration block (one struct, as memorylimiterprocessor aliases its
// internal config): a new threshold is a field here, its default below and its bound in
// Validate, nothing else.
type Thresholds struct {
	// MaxSampleAge is how old the GPU sample may be for the evidence to count as fresh;
	// older samples lower the confidence to medium.
	MaxSampleAge time.Duration `mapstructure:"max_sample_age"`

	// gpu_fault: a fault Xid from XidBefore before the OOM to XidAfter after it.
	XidBefore time.Duration `mapstructure:"xid_before"`
	XidAfter  time.Duration `mapstructure:"xid_after"`

	// zombie_context: unattributed memory above max(ZombieMinBytes, ZombieMinFraction × total).
	ZombieMinBytes    int64   `mapstructure:"zombie_min_bytes"`
	ZombieMinFraction float64 `mapstructure:"zombie_min_fraction"`

	// other_tenant: processes outside the failing workload hold at least
	// TenantMinFraction × total, or at least the request (and TenantMinBytes).
	TenantMinFraction float64 `mapstructure:"tenant_min_fraction"`
	TenantMinBytes    int64   `mapstructure:"tenant_min_bytes"`

	// worker_context_overhead, judged by shape: at least WorkerMinCount helper processes of
	// the failing workload besides its largest (main) process, each at most WorkerMaxBytes
	// and WorkerMaxMainFraction × the main process, within a factor WorkerSizeSpread of
	// each other, together at least WorkerMinFraction × total.
	WorkerMinCount        int     `mapstructure:"worker_min_count"`
	WorkerMaxBytes        int64   `mapstructure:"worker_max_bytes"`
	WorkerMaxMainFraction float64 `mapstructure:"worker_max_main_fraction"`
	WorkerSizeSpread      float64 `mapstructure:"worker_size_spread"`
	WorkerMinFraction     float64 `mapstructure:"worker_min_fraction"`

	// fragmentation: reserved − allocated at least max(requested, FragMinFraction ×
	// reserved, FragMinBytes).
	FragMinFraction float64 `mapstructure:"fragmentation_min_fraction"`
	FragMinBytes    int64   `mapstructure:"fragmentation_min_bytes"`

	// memory_leak: a least-squares line over the series after its last step, lasting at
	// least LeakMinDuration with LeakMinPoints samples, growing at least LeakMinSlope
	// bytes/s and LeakMinGrowthFraction × total in all, with R² ≥ LeakMinR2 and growth in
	// each of LeakSteadySegments equal spans (2..32). A step is a change of at least max(LeakStepMinBytes,
	// LeakStepFraction × total) between samples at most LeakStepMaxGap apart.
	LeakMinDuration       time.Duration `mapstructure:"leak_min_duration"`
	LeakMinPoints         int           `mapstructure:"leak_min_points"`
	LeakMinSlope          float64       `mapstructure:"leak_min_slope_bytes_per_second"`
	LeakMinGrowthFraction float64       `mapstructure:"leak_min_growth_fraction"`
	LeakMinR2             float64       `mapstructure:"leak_min_r2"`
	LeakSteadySegments    int           `mapstructure:"leak_steady_segments"`
	LeakStepMinBytes      int64         `mapstructure:"leak_step_min_bytes"`
	LeakStepFraction      float64       `mapstructure:"leak_step_fraction"`
	LeakStepMaxGap        time.Duration `mapstructure:"leak_step_max_gap"`

	// capacity_loss: RetiredPageBytes per retired page; Total counts as below the
	// product's usual NVML total when short by more than SpecShortfallFraction.
	// SpecTotals maps the product name (hw.model) to that usual total.
	RetiredPageBytes      int64            `mapstructure:"retired_page_bytes"`
	SpecShortfallFraction float64          `mapstructure:"spec_shortfall_fraction"`
	SpecTotals            map[string]int64 `mapstructure:"spec_totals"`

	// workload_too_large: the failing workload's footprint is at least FullFraction ×
	// total, and allocated is at least DenseFraction × reserved.
	FullFraction  float64 `mapstructure:"full_fraction"`
	DenseFraction float64 `mapstructure:"dense_fraction"`

	// ProcessBytesTolerance: how close a listed process's bytes must be to the message's
	// ProcessBytes to identify the failing process when its pid is not listed, as a
	// fraction of ProcessBytes (with a floor of 64 MiB).
	ProcessBytesTolerance float64 `mapstructure:"process_bytes_tolerance"`

	// Log clock skew: the message states the failing process's bytes and the GPU's free
	// memory at the failure. When either is farther than SkewMismatchFraction × total from
	// the window's at the record's timestamp, the stamp contradicts the message: the OOM is
	// classified at the nearest moment within SkewSearch of it where they agree, else at the
	// stamp with the confidence lowered. SkewSearch 0 disables the check.
	SkewSearch           time.Duration `mapstructure:"skew_search"`
	SkewMismatchFraction float64       `mapstructure:"skew_mismatch_fraction"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// DefaultThresholds returns the thresholds the processor uses unless configured.
func DefaultThresholds() Thresholds {
	return Thresholds{
		// The receiver samples every second; a few missed scrapes are still "at the OOM".
		MaxSampleAge: 10 * time.Second,
		// Fault Xids (79 fallen off the bus, 48 DBE, …) are often logged just before the
		// allocation fails, and the kernel line can trail the application's message.
		XidBefore: 5 * time.Minute,
		XidAfter:  time.Minute,
		// The driver keeps a few hundred MiB it does not attribute to any process
		// (contexts of exited-but-not-reaped processes, MPS server, firmware heaps).
		ZombieMinBytes:    gib,
		ZombieMinFraction: 0.05,
		TenantMinFraction: 0.10,
		TenantMinBytes:    512 * mib,
		// A bare CUDA context costs 300–600 MiB; cuDNN/cuBLAS workspaces, eager module
		// loading and a few cached tensors take a helper well past 1 GiB. 4 GiB is only a
		// ceiling: what decides is the shape (many alike, small beside the main process).
		WorkerMinCount:        4,
		WorkerMaxBytes:        4 * gib,
		WorkerMaxMainFraction: 0.25,
		// Copies of one worker differ by a few MiB of cached tensors; 1.5× tells them from
		// unrelated small processes.
		WorkerSizeSpread:  1.5,
		WorkerMinFraction: 0.10,
		FragMinFraction:   0.20,
		FragMinBytes:      256 * mib,
		LeakMinDuration:   2 * time.Minute,
		LeakMinPoints:     20,
		// 1 MiB/s fills an 80 GiB GPU in a day: slower growth is not what made this OOM.
		LeakMinSlope:          float64(mib),
		LeakMinGrowthFraction: 0.02,
		LeakMinR2:             0.9,
		// Eight spans of a 15-minute window are ~2 minutes each: a ramp that stopped a
		// couple of minutes before the OOM is not what filled the GPU.
		LeakSteadySegments: 8,
		// Loading a model moves GiBs in seconds; a leak moves MiBs per second.
		LeakStepMinBytes: gib,
		LeakStepFraction: 0.05,
		LeakStepMaxGap:   10 * time.Second,
		// NVML does not document the retirement granularity; 64 KiB is the GPU's large page
		// and the pessimistic choice (at most 64 retirements = 4 MiB).
		RetiredPageBytes:      64 * kib,
		SpecShortfallFraction: 0.03,
		SpecTotals:            defaultSpecTotals(),
		FullFraction:          0.85,
		DenseFraction:         0.90,
		ProcessBytesTolerance: 0.02,
		// Node and container log clocks drift seconds apart without NTP trouble and tens of
		// seconds with it; a minute covers those, and farther apart a match of two figures is
		// more likely a coincidence than the OOM's moment.
		SkewSearch: time.Minute,
		// One second between samples moves a process by at most what it allocates in a
		// second: MiB/s for a leak, a few GiB for a model load. A tenth of the GPU (4 GiB of
		// 40, 8 of 80) is beyond that and beyond the gap between CUDA's and NVML's totals,
		// yet far below the tens of GiB another moment of a busy GPU differs by.
		SkewMismatchFraction: 0.10,
	}
}

package classify

import (
	"errors"
	"fmt"
	"time"
)

// maxSkewSearch bounds skew_search.
const maxSkewSearch = 10 * time.Minute

// Validate checks the thresholds; every error names its YAML key (the collector prefixes
// them with "thresholds").
func (t *Thresholds) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	positive := func(key string, d time.Duration) {
		if d <= 0 {
			add("'%s' must be > 0", key)
		}
	}
	nonNegative := func(key string, b int64) {
		if b < 0 {
			add("'%s' must be >= 0", key)
		}
	}
	fraction := func(key string, f float64) {
		if !(f > 0 && f <= 1) {
			add("'%s' must be in (0, 1], got %v", key, f)
		}
	}
	positive("max_sample_age", t.MaxSampleAge)
	positive("leak_min_duration", t.LeakMinDuration)
	positive("leak_step_max_gap", t.LeakStepMaxGap)
	if t.LeakMinPoints < 3 {
		add("'leak_min_points' must be >= 3 (a line through fewer says nothing), got %d", t.LeakMinPoints)
	}
	// The fit clamps the span count to [2, 32]; a value outside would be silently changed.
	if t.LeakSteadySegments < 2 || t.LeakSteadySegments > 32 {
		add("'leak_steady_segments' must be in [2, %d], got %d", 32, t.LeakSteadySegments)
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
	nonNegative("fragmentation_min_bytes", t.FragMinBytes)
	nonNegative("leak_step_min_bytes", t.LeakStepMinBytes)
	if t.RetiredPageBytes <= 0 {
		errs = append(errs, errors.New("'retired_page_bytes' must be > 0"))
	}
	if t.WorkerMinCount < 1 {
		errs = append(errs, errors.New("'worker_min_count' must be >= 1"))
	}
	if !(t.LeakMinSlope >= 0) { // NaN too
		errs = append(errs, errors.New("'leak_min_slope_bytes_per_second' must be >= 0"))
	}
	fraction("zombie_min_fraction", t.ZombieMinFraction)
	fraction("tenant_min_fraction", t.TenantMinFraction)
	fraction("worker_min_fraction", t.WorkerMinFraction)
	fraction("worker_max_main_fraction", t.WorkerMaxMainFraction)
	if !(t.WorkerSizeSpread >= 1) { // NaN too
		add("'worker_size_spread' must be >= 1, got %v", t.WorkerSizeSpread)
	}
	fraction("fragmentation_min_fraction", t.FragMinFraction)
	fraction("leak_min_growth_fraction", t.LeakMinGrowthFraction)
	fraction("leak_min_r2", t.LeakMinR2)
	fraction("leak_step_fraction", t.LeakStepFraction)
	fraction("spec_shortfall_fraction", t.SpecShortfallFraction)
	fraction("full_fraction", t.FullFraction)
	fraction("dense_fraction", t.DenseFraction)
	fraction("process_bytes_tolerance", t.ProcessBytesTolerance)
	fraction("skew_mismatch_fraction", t.SkewMismatchFraction)
	// Farther than this the nearest agreeing moment is more likely a coincidence than the
	// OOM's; and every OOM whose figures disagree would read that much of its GPU's window.
	if t.SkewSearch < 0 || t.SkewSearch > maxSkewSearch {
		add("'skew_search' must be in [0, %s] (0 disables), got %s", maxSkewSearch, t.SkewSearch)
	}
	for name, b := range t.SpecTotals {
		if b <= 0 {
			add("'spec_totals' entry %q must be > 0", name)
		}
	}
	return errors.Join(errs...)
}

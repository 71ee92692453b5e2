package classify

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestDefaultThresholdsAsDocumented pins the byte and duration defaults that docs/causes.md
// and the README state: a unit slip (512 / MiB for 512 × MiB) would make a rule fire on any
// amount of memory.
func TestDefaultThresholdsAsDocumented(t *testing.T) {
	th := DefaultThresholds()
	for _, tt := range []struct {
		key       string
		got, want int64
	}{
		{"zombie_min_bytes", th.ZombieMinBytes, 1 << 30},
		{"tenant_min_bytes", th.TenantMinBytes, 512 << 20},
		{"worker_max_bytes", th.WorkerMaxBytes, 4 << 30},
		{"fragmentation_min_bytes", th.FragMinBytes, 256 << 20},
		{"leak_step_min_bytes", th.LeakStepMinBytes, 1 << 30},
		{"retired_page_bytes", th.RetiredPageBytes, 64 << 10},
		{"leak_min_slope_bytes_per_second", int64(th.LeakMinSlope), 1 << 20},
		{"max_sample_age", int64(th.MaxSampleAge), int64(10 * time.Second)},
		{"xid_before", int64(th.XidBefore), int64(5 * time.Minute)},
		{"xid_after", int64(th.XidAfter), int64(time.Minute)},
		{"leak_min_duration", int64(th.LeakMinDuration), int64(2 * time.Minute)},
		{"leak_step_max_gap", int64(th.LeakStepMaxGap), int64(10 * time.Second)},
		{"skew_search", int64(th.SkewSearch), int64(time.Minute)},
	} {
		if tt.got != tt.want {
			t.Errorf("%s default %d, want %d", tt.key, tt.got, tt.want)
		}
	}
	if err := th.Validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
}

// TestValidateBounds: each threshold at the edge of what it accepts, and just past it; an
// error names the threshold's YAML key.
func TestValidateBounds(t *testing.T) {
	type edit = func(*Thresholds)
	tests := []struct {
		key     string
		ok, bad []edit
	}{
		{"max_sample_age", []edit{func(t *Thresholds) { t.MaxSampleAge = 1 }}, []edit{func(t *Thresholds) { t.MaxSampleAge = 0 }}},
		{"leak_min_duration", []edit{func(t *Thresholds) { t.LeakMinDuration = 1 }}, []edit{func(t *Thresholds) { t.LeakMinDuration = 0 }}},
		{"leak_step_max_gap", []edit{func(t *Thresholds) { t.LeakStepMaxGap = 1 }}, []edit{func(t *Thresholds) { t.LeakStepMaxGap = 0 }}},
		{"leak_min_points", []edit{func(t *Thresholds) { t.LeakMinPoints = 3 }}, []edit{func(t *Thresholds) { t.LeakMinPoints = 2 }}},
		{"leak_steady_segments", []edit{func(t *Thresholds) { t.LeakSteadySegments = 2 }, func(t *Thresholds) { t.LeakSteadySegments = 32 }},
			[]edit{func(t *Thresholds) { t.LeakSteadySegments = 1 }, func(t *Thresholds) { t.LeakSteadySegments = 33 }}},
		{"skew_search", []edit{func(t *Thresholds) { t.SkewSearch = 0 }, func(t *Thresholds) { t.SkewSearch = 10 * time.Minute }},
			[]edit{func(t *Thresholds) { t.SkewSearch = -1 }, func(t *Thresholds) { t.SkewSearch = 10*time.Minute + 1 }}},
		{"skew_mismatch_fraction", []edit{func(t *Thresholds) { t.SkewMismatchFraction = 1 }},
			[]edit{func(t *Thresholds) { t.SkewMismatchFraction = 0 }, func(t *Thresholds) { t.SkewMismatchFraction = math.NaN() }}},
		{"xid_before", []edit{func(t *Thresholds) { t.XidBefore = 0 }}, []edit{func(t *Thresholds) { t.XidBefore = -1 }}},
		{"xid_after", []edit{func(t *Thresholds) { t.XidAfter = 0 }}, []edit{func(t *Thresholds) { t.XidAfter = -1 }}},
		{"zombie_min_bytes", []edit{func(t *Thresholds) { t.ZombieMinBytes = 0 }}, []edit{func(t *Thresholds) { t.ZombieMinBytes = -1 }}},
		{"tenant_min_bytes", []edit{func(t *Thresholds) { t.TenantMinBytes = 0 }}, []edit{func(t *Thresholds) { t.TenantMinBytes = -1 }}},
		{"worker_max_bytes", []edit{func(t *Thresholds) { t.WorkerMaxBytes = 0 }}, []edit{func(t *Thresholds) { t.WorkerMaxBytes = -1 }}},
		{"fragmentation_min_bytes", []edit{func(t *Thresholds) { t.FragMinBytes = 0 }}, []edit{func(t *Thresholds) { t.FragMinBytes = -1 }}},
		{"leak_step_min_bytes", []edit{func(t *Thresholds) { t.LeakStepMinBytes = 0 }}, []edit{func(t *Thresholds) { t.LeakStepMinBytes = -1 }}},
		{"retired_page_bytes", []edit{func(t *Thresholds) { t.RetiredPageBytes = 1 }}, []edit{func(t *Thresholds) { t.RetiredPageBytes = 0 }}},
		{"worker_min_count", []edit{func(t *Thresholds) { t.WorkerMinCount = 1 }}, []edit{func(t *Thresholds) { t.WorkerMinCount = 0 }}},
		{"leak_min_slope_bytes_per_second", []edit{func(t *Thresholds) { t.LeakMinSlope = 0 }},
			[]edit{func(t *Thresholds) { t.LeakMinSlope = -1 }, func(t *Thresholds) { t.LeakMinSlope = math.NaN() }}},
		{"worker_size_spread", []edit{func(t *Thresholds) { t.WorkerSizeSpread = 1 }},
			[]edit{func(t *Thresholds) { t.WorkerSizeSpread = 0.999 }, func(t *Thresholds) { t.WorkerSizeSpread = math.NaN() }}},
		{"spec_totals", []edit{func(t *Thresholds) { t.SpecTotals = map[string]int64{"X": 1} }},
			[]edit{func(t *Thresholds) { t.SpecTotals = map[string]int64{"X": 0} }}},
	}
	// Every fraction: (0, 1].
	fractions := map[string]func(*Thresholds) *float64{
		"zombie_min_fraction":        func(t *Thresholds) *float64 { return &t.ZombieMinFraction },
		"tenant_min_fraction":        func(t *Thresholds) *float64 { return &t.TenantMinFraction },
		"worker_min_fraction":        func(t *Thresholds) *float64 { return &t.WorkerMinFraction },
		"worker_max_main_fraction":   func(t *Thresholds) *float64 { return &t.WorkerMaxMainFraction },
		"fragmentation_min_fraction": func(t *Thresholds) *float64 { return &t.FragMinFraction },
		"leak_min_growth_fraction":   func(t *Thresholds) *float64 { return &t.LeakMinGrowthFraction },
		"leak_min_r2":                func(t *Thresholds) *float64 { return &t.LeakMinR2 },
		"leak_step_fraction":         func(t *Thresholds) *float64 { return &t.LeakStepFraction },
		"spec_shortfall_fraction":    func(t *Thresholds) *float64 { return &t.SpecShortfallFraction },
		"full_fraction":              func(t *Thresholds) *float64 { return &t.FullFraction },
		"dense_fraction":             func(t *Thresholds) *float64 { return &t.DenseFraction },
		"process_bytes_tolerance":    func(t *Thresholds) *float64 { return &t.ProcessBytesTolerance },
	}
	set := func(field func(*Thresholds) *float64, v float64) edit { return func(t *Thresholds) { *field(t) = v } }
	for key, field := range fractions {
		tests = append(tests, struct {
			key     string
			ok, bad []edit
		}{key, []edit{set(field, 1), set(field, 1e-9)}, []edit{set(field, 0), set(field, 1.000001), set(field, math.NaN())}})
	}
	for _, tt := range tests {
		for i, e := range tt.ok {
			th := DefaultThresholds()
			e(&th)
			if err := th.Validate(); err != nil {
				t.Errorf("%s ok #%d: %v", tt.key, i, err)
			}
		}
		for i, e := range tt.bad {
			th := DefaultThresholds()
			e(&th)
			err := th.Validate()
			if err == nil || !strings.Contains(err.Error(), "'"+tt.key+"'") {
				t.Errorf("%s bad #%d: %v", tt.key, i, err)
			}
		}
	}
}

package classify

import (
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
	} {
		if tt.got != tt.want {
			t.Errorf("%s default %d, want %d", tt.key, tt.got, tt.want)
		}
	}
	if err := th.Validate(); err != nil {
		t.Fatalf("the defaults do not validate: %v", err)
	}
}

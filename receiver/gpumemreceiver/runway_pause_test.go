package gpumemreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// runwayDrive scrapes a GPU whose one process holds used(sec) each second until the GPU is
// full or seconds pass, and says when records went out and when the runway was present.
func runwayDrive(t *testing.T, seconds int, used func(sec int) int64) (records []int, present map[int]bool, fullAt int) {
	t.Helper()
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 4242}}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clk := newFakeClock(start)
	sink := new(consumertest.LogsSink)
	r := startRunway(t, newFakeNVML(g), clk.Now, nil, sink)
	present = map[int]bool{}
	for sec := 0; sec < seconds; sec++ {
		clk.Set(start.Add(time.Duration(sec) * time.Second))
		u := used(sec)
		if u >= g.total-g.reserved {
			return records, present, sec
		}
		g.used, g.compute[0].UsedGpuMemory = u, uint64(u)
		n := sink.LogRecordCount()
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		if sink.LogRecordCount() > n {
			records = append(records, sec)
		}
		present[sec] = len(byGPU(md)[g.uuid]["nvidia.gpu.memory.runway"]) > 0
	}
	return records, present, seconds
}

// pausedLeak grows 40 MiB/s from 10 GiB, holds still for pause seconds from pauseAt, then
// grows again.
func pausedLeak(pauseAt, pause int) func(int) int64 {
	return func(sec int) int64 {
		grown := sec
		switch {
		case sec >= pauseAt+pause:
			grown = sec - pause
		case sec >= pauseAt:
			grown = pauseAt
		}
		return 10*gib + int64(grown)*40*mib
	}
}

// A leak that pauses and resumes is recognised again about min_duration after it resumes,
// whatever the pause's length: the last min_duration is judged alone when memory only paused.
// Before, the flat stretch failed the whole window's span test until it left the window, up
// to 10 min after the growth came back, and the record went out with 11 min, or 4 min, of the
// 15 min left. An episode outlives a pause shorter than min_duration; a longer one ends it,
// and the resumed leak sends a new record.
func TestRunwayPausedLeakResumes(t *testing.T) {
	for name, tc := range map[string]struct {
		pauseAt, pause int
		// records: the runway left (s) when each record went out, at least.
		minLeft []int
	}{
		"pause before the warning, 150 s": {600, 150, []int{870}},
		"pause before the warning, 300 s": {600, 300, []int{870}},
		"pause after the warning, 120 s":  {1000, 120, []int{870}},
		"pause after the warning, 300 s":  {1000, 300, []int{870, 650}},
		"pause after the warning, 400 s":  {1200, 400, []int{870, 450}},
	} {
		t.Run(name, func(t *testing.T) {
			used := pausedLeak(tc.pauseAt, tc.pause)
			records, present, fullAt := runwayDrive(t, 4000, used)
			require.Len(t, records, len(tc.minLeft), "records at %v, full at %d", records, fullAt)
			for i, at := range records {
				left := int((81047*mib - used(at)) / (40 * mib)) // the true runway then
				assert.GreaterOrEqual(t, left, tc.minLeft[i], "record %d at %d s", i, at)
				assert.LessOrEqual(t, left, 15*60, "record %d not before the runway crossed 15 min", i)
			}
			resumed := tc.pauseAt + tc.pause
			back := -1
			for sec := resumed; sec < fullAt && back < 0; sec++ {
				if present[sec] {
					back = sec
				}
			}
			assert.LessOrEqual(t, back-resumed, 120, "runway back within min_duration of the resumption")
		})
	}
}

// A training loop that grows 36 GiB over minutes and frees it gradually (no step) looks like
// a leak on every rise when each rise is judged alone; the memory came down, so it is judged
// over the whole window, which fails after the first cycle: one record, not one per cycle.
func TestRunwaySlowSawtoothWarnsOnce(t *testing.T) {
	for _, tc := range []struct{ rise, fall int }{{150, 30}, {180, 60}, {300, 60}, {240, 120}} {
		period := tc.rise + tc.fall
		records, _, _ := runwayDrive(t, 15*period, func(sec int) int64 {
			if ph := sec % period; ph < tc.rise {
				return 30*gib + int64(ph)*36*gib/int64(tc.rise)
			} else {
				return 66*gib - int64(ph-tc.rise)*36*gib/int64(tc.fall)
			}
		})
		assert.LessOrEqual(t, len(records), 1, "rise %d s, fall %d s: records at %v", tc.rise, tc.fall, records)
	}
}

package window

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPointsAheadOfTheClockAreRejected(t *testing.T) {
	cfg := testConfig()
	cfg.MaxAhead = time.Minute
	cfg.Now = func() time.Time { return t0.Add(time.Minute) }
	s := New(cfg)
	k := GPUKey{Host: "h", HWID: "GPU-a"}
	for i := 0; i <= 60; i++ {
		require.Zero(t, s.Observe(k, GPUInfo{Index: -1}, scrape(sec(i), 1, map[int]int64{7: 1})).FutureRejected)
	}
	of := s.Observe(k, GPUInfo{Index: -1}, scrape(t0.AddDate(1, 0, 0).UnixNano(), 1, map[int]int64{7: 1}))
	assert.Equal(t, 4, of.FutureRejected, "used, total, free, one process")
	assert.False(t, s.Covered("h", t0.Add(61*time.Second)), "caught up is read from accepted points only")
	snap, ok := s.Snapshot(Query{Host: "h", At: t0.Add(60 * time.Second), PID: 7, DeviceIndex: -1})
	require.True(t, ok)
	assert.Len(t, snap.Usage, 61, "no history pushed out of the window")
	assert.Len(t, snap.Processes[0].Series, 61)

	// Within MaxAhead a point is believed: clocks a little apart are normal.
	assert.Zero(t, s.Observe(k, GPUInfo{Index: -1}, scrape(sec(119), 1, nil)).FutureRejected)
	// A junk-only resource creates no GPU.
	of = s.Observe(GPUKey{Host: "h", HWID: "GPU-junk"}, GPUInfo{Index: -1}, scrape(sec(1000), 1, nil))
	assert.Equal(t, 3, of.FutureRejected)
	assert.Equal(t, 1, s.Len())
}

func TestImpossibleValuesAreRejected(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(0), 10, nil)) // limit 80 GiB stored
	of := s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Used, T: sec(1), V: math.MaxInt64},
		{Kind: Free, T: sec(1), V: 81 * gib}, // above the stored limit
		{Kind: Reserved, T: sec(1), V: -1},
		{Kind: ProcessBytes, T: sec(1), V: 90 * gib, Process: ProcessInfo{PID: 1}},
		{Kind: RetiredPages, T: sec(1), V: math.MaxInt64, Label: "sbe"},
		{Kind: Unattributed, T: sec(1), V: 2 * gib}, // fine
	})
	assert.Equal(t, 5, of.ValuesRejected)
	snap, ok := s.Snapshot(Query{At: t0.Add(time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, 10*gib, snap.Used)
	assert.Equal(t, 70*gib, snap.Free)
	assert.Equal(t, int64(-1), snap.Reserved)
	assert.Equal(t, 2*gib, snap.Unattributed)
	assert.Nil(t, snap.RetiredPages)

	// A new limit in the same batch is the bound for that batch; an absurd limit is no bound.
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Total, T: sec(2), V: 96 * gib}, {Kind: Used, T: sec(2), V: 90 * gib},
		{Kind: Total, T: sec(3), V: math.MaxInt64}, {Kind: Used, T: sec(3), V: 1 << 50},
	})
	assert.Equal(t, 2, of.ValuesRejected)
}

// TestPointsOlderThanTheWindowAreNotMerged: a point older than the GPU's window would be
// trimmed anyway; merging it would re-encode the whole compressed series first.
func TestPointsOlderThanTheWindowAreNotMerged(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	for i := 0; i < 100; i++ {
		s.Observe(k, GPUInfo{Index: -1}, scrape(sec(i), 1, nil))
	}
	g := s.hosts[""].gpus["GPU-a"]
	before := all(&g.gauges[Used])
	s.Observe(k, GPUInfo{Index: -1}, scrape(t0.AddDate(-1, 0, 0).UnixNano(), 2, nil))
	assert.Equal(t, before, all(&g.gauges[Used]))
	// Late points inside the window are merged.
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(50) + 1, V: 3 * gib}})
	assert.Len(t, all(&g.gauges[Used]), len(before)+1)
}

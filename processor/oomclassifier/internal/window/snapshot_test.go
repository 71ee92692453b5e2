package window

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoGPUHost: GPU-a (index 0) runs pid 10, GPU-b (index 1) runs pid 20; pid 30 spans both.
func twoGPUHost() *Store {
	s := New(testConfig())
	for i := 0; i < 5; i++ {
		s.Observe(GPUKey{Host: "h", HWID: "GPU-a"}, GPUInfo{Index: 0}, scrape(sec(i), 10, map[int]int64{10: 5, 30: 1}))
		s.Observe(GPUKey{Host: "h", HWID: "GPU-b"}, GPUInfo{Index: 1}, scrape(sec(i), 10, map[int]int64{20: 5, 30: 1}))
	}
	return s
}

func TestMatchingRules(t *testing.T) {
	at := t0.Add(3 * time.Second)
	tests := []struct {
		name      string
		q         Query
		wantHWID  string
		wantBy    string
		wantMatch bool
	}{
		{"pid on one GPU", Query{Host: "h", At: at, PID: 20, DeviceIndex: 0}, "GPU-b", MatchedByPID, true},
		{"pid on two GPUs, ordinal picks", Query{Host: "h", At: at, PID: 30, DeviceIndex: 1}, "GPU-b", MatchedByPID, true},
		{"pid on two GPUs, no ordinal", Query{Host: "h", At: at, PID: 30, DeviceIndex: -1}, "", "", false},
		{"unknown pid falls to ordinal", Query{Host: "h", At: at, PID: 99, DeviceIndex: 0}, "GPU-a", MatchedByNodeOrdinal, true},
		{"ordinal only", Query{Host: "h", At: at, PID: -1, DeviceIndex: 1}, "GPU-b", MatchedByNodeOrdinal, true},
		{"ordinal not on host", Query{Host: "h", At: at, PID: -1, DeviceIndex: 5}, "", "", false},
		{"nothing to go on", Query{Host: "h", At: at, PID: -1, DeviceIndex: -1}, "", "", false},
		{"other host", Query{Host: "x", At: at, PID: 10, DeviceIndex: 0}, "", "", false},
		{"host.name absent is its own host", Query{Host: "", At: at, PID: 10, DeviceIndex: 0}, "", "", false},
		{"pid not alive then", Query{Host: "h", At: t0.Add(time.Hour), PID: 10, DeviceIndex: 0}, "", "", false},
	}
	s := twoGPUHost()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, ok := s.Snapshot(tt.q)
			assert.Equal(t, tt.wantMatch, ok)
			assert.Equal(t, tt.wantHWID, snap.HWID)
			assert.Equal(t, tt.wantBy, snap.MatchedBy)
		})
	}
}

func TestSingleGPUOnlyCountsGPUsReportingThen(t *testing.T) {
	s := New(testConfig())
	// GPU-old was swapped out an hour before GPU-new appeared on the same host.
	s.Observe(GPUKey{Host: "h", HWID: "GPU-old"}, GPUInfo{Index: 0}, scrape(sec(-3600), 1, nil))
	s.Observe(GPUKey{Host: "h", HWID: "GPU-new"}, GPUInfo{Index: 0}, scrape(sec(0), 1, nil))
	snap, ok := s.Snapshot(Query{Host: "h", At: t0, PID: -1, DeviceIndex: -1})
	assert.True(t, ok)
	assert.Equal(t, "GPU-new", snap.HWID)
	assert.Equal(t, MatchedByOnlyGPU, snap.MatchedBy)
}

func TestLookAheadBeforeFirstSample(t *testing.T) {
	s := New(testConfig())
	s.Observe(GPUKey{HWID: "GPU-a"}, GPUInfo{Index: -1}, scrape(sec(2), 7, map[int]int64{5: 7}))
	snap, ok := s.Snapshot(Query{At: t0, PID: -1, DeviceIndex: -1})
	assert.True(t, ok)
	assert.Equal(t, 7*gib, snap.Used)
	assert.Equal(t, 2*time.Second, snap.SampleAge)
	assert.Len(t, snap.Processes, 1)
	_, ok = s.Snapshot(Query{At: t0.Add(-time.Minute), PID: -1, DeviceIndex: -1})
	assert.False(t, ok, "a minute before the first sample is too far")
}

func TestProcessesOfTheNearestCollectionOnly(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(0), 5, map[int]int64{1: 1, 2: 2}))
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(1), 5, map[int]int64{2: 3})) // pid 1 exited
	snap, _ := s.Snapshot(Query{At: t0.Add(1500 * time.Millisecond), PID: -1, DeviceIndex: -1})
	assert.Len(t, snap.Processes, 1)
	assert.Equal(t, 2, snap.Processes[0].PID)
	assert.Equal(t, 3*gib, snap.Processes[0].Bytes)
	snap, _ = s.Snapshot(Query{At: t0.Add(500 * time.Millisecond), PID: -1, DeviceIndex: -1})
	assert.Len(t, snap.Processes, 2, "both were alive at 0.5 s")
}

// TestSnapshotToReusesWithoutLeftovers runs queries of different shapes through one reused
// Snapshot: each must equal a fresh Snapshot of the same query, with nothing of the previous
// one (series, labels, Xids, processes) left behind.
func TestSnapshotToReusesWithoutLeftovers(t *testing.T) {
	s := New(testConfig())
	for i := 0; i < 30; i++ {
		s.Observe(GPUKey{Host: "h", HWID: "GPU-a"}, GPUInfo{BusID: "0000:3b:00.0", Index: 0},
			append(scrape(sec(i), 10+int64(i), map[int]int64{10: 5, 11: 2, 12: 1}),
				Sample{Kind: RetiredPages, T: sec(i), V: 3, Label: "double_bit_ecc"}))
		s.Observe(GPUKey{Host: "h", HWID: "GPU-b"}, GPUInfo{Index: 1}, scrape(sec(i), 1, map[int]int64{20: 1}))
	}
	s.Observe(GPUKey{Host: "h", HWID: "GPU-c"}, GPUInfo{Index: 2}, []Sample{{Kind: Total, T: sec(29), V: 80 * gib}})
	s.ObserveXid("h", Xid{T: t0.Add(time.Second), Code: 79, Fault: true, BusID: "0000:3b:00.0"})
	at := t0.Add(20 * time.Second)
	queries := []Query{
		{Host: "h", At: at, PID: 11, DeviceIndex: -1},               // GPU-a: series, labels, Xid
		{Host: "h", At: at, PID: 20, DeviceIndex: -1},               // GPU-b: shorter series, none of those
		{Host: "h", At: at, PID: -1, DeviceIndex: 0},                // GPU-a without a series
		{Host: "h", At: at, PID: -1, DeviceIndex: 2},                // GPU-c: no usage, no processes
		{Host: "h", At: at, PID: 10, DeviceIndex: -1},               // GPU-a again, another series
		{Host: "h", At: t0.Add(time.Hour), PID: 10, DeviceIndex: 0}, // no match
	}
	var reused Snapshot
	for i, q := range queries {
		want, wantOK := s.Snapshot(q)
		got := reused
		ok := s.SnapshotTo(&got, q)
		require.Equal(t, wantOK, ok, "query %d", i)
		if !ok {
			continue
		}
		want.series, got.series = nil, nil // the kept array, not part of the answer
		require.Equal(t, want, got, "query %d", i)
		reused = got
	}
}

// TestSnapshotToAllocatesNothingWhenWarm: with a warm Snapshot, a query of a GPU without
// labels or Xids copies the full window into arrays it already has.
func TestSnapshotToAllocatesNothingWhenWarm(t *testing.T) {
	s := New(testConfig())
	for i := 0; i < 900; i++ {
		s.Observe(GPUKey{Host: "h", HWID: "GPU-a"}, GPUInfo{Index: 0}, scrape(sec(i), 10, map[int]int64{10: 5, 11: 2}))
	}
	q := Query{Host: "h", At: t0.Add(899 * time.Second), PID: 10, DeviceIndex: -1}
	var snap Snapshot
	require.True(t, s.SnapshotTo(&snap, q))
	allocs := testing.AllocsPerRun(20, func() { s.SnapshotTo(&snap, q) })
	assert.Zero(t, allocs)
	assert.Len(t, snap.Usage, 900)
	assert.Len(t, snap.Processes[0].Series, 900)
}

package window

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGPUAliveAtTheWindowEdges: a GPU whose newest point is exactly one window before the
// query still reported then, and a first point exactly lookAhead after it still describes it;
// a nanosecond further either way does not.
func TestGPUAliveAtTheWindowEdges(t *testing.T) {
	s := New(testConfig()) // 15 min
	s.Observe(GPUKey{HWID: "GPU-a"}, GPUInfo{Index: -1}, scrape(sec(0), 3, nil))
	q := func(at time.Time) (Snapshot, bool) { return s.Snapshot(Query{At: at, PID: -1, DeviceIndex: -1}) }
	snap, ok := q(t0.Add(15 * time.Minute))
	require.True(t, ok, "newest point exactly a window back")
	assert.Equal(t, 3*gib, snap.Used)
	assert.Equal(t, []Point{{sec(0), 3 * gib}}, snap.Usage, "the window includes its first instant")
	_, ok = q(t0.Add(15*time.Minute + 1))
	assert.False(t, ok, "a nanosecond more")

	snap, ok = q(t0.Add(-lookAhead))
	require.True(t, ok, "first point exactly lookAhead after the query")
	assert.Equal(t, 3*gib, snap.Used)
	assert.Equal(t, 80*gib, snap.Total)
	assert.Equal(t, lookAhead, snap.SampleAge)
	_, ok = q(t0.Add(-lookAhead - 1))
	assert.False(t, ok, "a nanosecond earlier")
}

// TestProcessOnlyGPUIsAlive: process samples alone (a receiver sending them in their own
// batch) make a GPU match, with the same lookAhead edge as the gauges.
func TestProcessOnlyGPUIsAlive(t *testing.T) {
	s := New(testConfig())
	s.Observe(GPUKey{HWID: "GPU-a"}, GPUInfo{Index: -1}, []Sample{
		{Kind: ProcessBytes, T: sec(10), V: 4 * gib, Process: ProcessInfo{PID: 7}},
	})
	snap, ok := s.Snapshot(Query{At: t0.Add(10*time.Second - lookAhead), PID: 7, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, MatchedByPID, snap.MatchedBy)
	require.Len(t, snap.Processes, 1)
	assert.Equal(t, 4*gib, snap.Processes[0].Bytes)
	assert.Equal(t, int64(-1), snap.Used)
	_, ok = s.Snapshot(Query{At: t0.Add(10*time.Second - lookAhead - 1), PID: 7, DeviceIndex: -1})
	assert.False(t, ok)
}

// TestPresenceSlackIsInclusive: a process sampled exactly presenceSlack before the newest
// collection at the query time belongs to it; a nanosecond earlier it is an older collection.
func TestPresenceSlackIsInclusive(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	ref := sec(10)
	proc := func(pid int, at int64) []Sample {
		return []Sample{{Kind: ProcessBytes, T: at, V: gib, Process: ProcessInfo{PID: pid}}}
	}
	s.Observe(k, GPUInfo{Index: -1}, proc(3, ref-int64(presenceSlack)-1))
	s.Observe(k, GPUInfo{Index: -1}, proc(2, ref-int64(presenceSlack)))
	s.Observe(k, GPUInfo{Index: -1}, append(scrape(ref, 2, nil), proc(1, ref)...))
	snap, ok := s.Snapshot(Query{At: time.Unix(0, ref), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	var pids []int
	for _, p := range snap.Processes {
		pids = append(pids, p.PID)
	}
	assert.Equal(t, []int{1, 2}, pids)
}

// TestProcessAtTheWindowStartIsListed: the window is inclusive at its start for processes as
// for usage: a collection exactly one window before the query is the nearest one there is.
func TestProcessAtTheWindowStartIsListed(t *testing.T) {
	s := New(testConfig()) // 15 min
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(0), 1, map[int]int64{9: 1}))
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(900), 1, nil))
	snap, ok := s.Snapshot(Query{At: t0.Add(15 * time.Minute), PID: 9, DeviceIndex: -1})
	require.True(t, ok)
	require.Len(t, snap.Processes, 1)
	assert.Equal(t, []Point{{sec(0), gib}}, snap.Processes[0].Series)
	assert.Len(t, snap.Usage, 2)

	// With a second GPU the pid picks its GPU, from the same edge.
	s.Observe(GPUKey{HWID: "GPU-b"}, GPUInfo{Index: -1}, scrape(sec(900), 1, nil))
	snap, ok = s.Snapshot(Query{At: t0.Add(15 * time.Minute), PID: 9, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, "GPU-a", snap.HWID)
	assert.Equal(t, MatchedByPID, snap.MatchedBy)
	// And a query at the first sample's instant has that sample as its whole usage history.
	snap, ok = s.Snapshot(Query{At: t0, PID: -1, DeviceIndex: -1})
	require.True(t, ok, "GPU-b has no sample near t0: only GPU-a is alive then")
	assert.Equal(t, []Point{{sec(0), gib}}, snap.Usage)
}

// TestSampleAgeIsOfTheUsageSample: the age reported is that of the usage point used, not of
// whichever other gauge was read last.
func TestSampleAgeIsOfTheUsageSample(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(0), V: gib}})
	s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Total, T: sec(1), V: 80 * gib}, {Kind: Free, T: sec(1), V: 79 * gib},
		{Kind: Reserved, T: sec(1), V: gib}, {Kind: Unattributed, T: sec(1), V: 0},
	})
	snap, ok := s.Snapshot(Query{At: t0.Add(1300 * time.Millisecond), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, 1300*time.Millisecond, snap.SampleAge)
}

// TestPIDZeroIsAPID: only -1 means "unknown pid"; a record naming pid 0 is matched by it and
// gets its history like any other.
func TestPIDZeroIsAPID(t *testing.T) {
	s := New(testConfig())
	for i := 0; i < 3; i++ {
		s.Observe(GPUKey{Host: "h", HWID: "GPU-a"}, GPUInfo{Index: 0}, scrape(sec(i), 1, map[int]int64{5: 1}))
		s.Observe(GPUKey{Host: "h", HWID: "GPU-b"}, GPUInfo{Index: 1}, scrape(sec(i), 1, map[int]int64{0: 2}))
	}
	snap, ok := s.Snapshot(Query{Host: "h", At: t0.Add(2 * time.Second), PID: 0, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, "GPU-b", snap.HWID)
	assert.Equal(t, MatchedByPID, snap.MatchedBy)
	require.Len(t, snap.Processes, 1)
	assert.Len(t, snap.Processes[0].Series, 3)
}

// TestUnknownIndexMatchesNoOrdinal: a GPU whose resources never named nvidia.gpu.index is
// picked by no ordinal written in a message; once it names one, it keeps it.
func TestUnknownIndexMatchesNoOrdinal(t *testing.T) {
	s := New(testConfig())
	s.Observe(GPUKey{Host: "h", HWID: "GPU-a"}, GPUInfo{Index: 0}, scrape(sec(0), 1, nil))
	s.Observe(GPUKey{Host: "h", HWID: "GPU-b"}, GPUInfo{Index: -1}, scrape(sec(0), 1, nil))
	q := func(at time.Time, idx int) (Snapshot, bool) {
		return s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: idx})
	}
	for _, idx := range []int{-1, 1, 2} {
		_, ok := q(t0, idx)
		assert.False(t, ok, "ordinal %d", idx)
	}
	snap, ok := q(t0, 0)
	require.True(t, ok)
	assert.Equal(t, "GPU-a", snap.HWID)
	s.Observe(GPUKey{Host: "h", HWID: "GPU-b"}, GPUInfo{Index: 2}, scrape(sec(1), 1, nil))
	s.Observe(GPUKey{Host: "h", HWID: "GPU-b"}, GPUInfo{Index: -1}, scrape(sec(2), 1, nil)) // keeps 2
	snap, ok = q(t0.Add(2*time.Second), 2)
	require.True(t, ok)
	assert.Equal(t, "GPU-b", snap.HWID)
	assert.Equal(t, MatchedByNodeOrdinal, snap.MatchedBy)
}

package window

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const gib = int64(1) << 30

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func sec(n int) int64 { return t0.Add(time.Duration(n) * time.Second).UnixNano() }

func testConfig() Config {
	return Config{Window: 15 * time.Minute, MaxGPUs: 16, MaxSamplesPerGPU: 1200, MaxProcessesPerGPU: 8, MaxXidsPerHost: 4}
}

// scrape is one collection of a GPU: usage, capacity, free and the given processes (pid → GiB).
func scrape(at int64, usedGiB int64, procs map[int]int64) []Sample {
	ss := []Sample{
		{Kind: Used, T: at, V: usedGiB * gib},
		{Kind: Total, T: at, V: 80 * gib},
		{Kind: Free, T: at, V: (80 - usedGiB) * gib},
	}
	for pid, b := range procs {
		ss = append(ss, Sample{Kind: ProcessBytes, T: at, V: b * gib, Process: ProcessInfo{PID: pid, Name: "python"}})
	}
	return ss
}

func TestObserveAndSnapshotAtTime(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{Host: "node1", HWID: "GPU-a"}
	for i := 0; i < 60; i++ {
		s.Observe(k, GPUInfo{Name: "H100", Index: 0}, scrape(sec(i), int64(10+i/10), map[int]int64{42: int64(5 + i/10)}))
	}
	snap, ok := s.Snapshot(Query{Host: "node1", At: t0.Add(25*time.Second + 300*time.Millisecond), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, MatchedByOnlyGPU, snap.MatchedBy)
	assert.Equal(t, "H100", snap.Info.Name)
	assert.Equal(t, 12*gib, snap.Used, "value of the sample at 25 s, not the newest")
	assert.Equal(t, 80*gib, snap.Total)
	assert.Equal(t, int64(-1), snap.Reserved)
	assert.Equal(t, 300*time.Millisecond, snap.SampleAge)
	assert.Len(t, snap.Usage, 26)
	require.Len(t, snap.Processes, 1)
	assert.Equal(t, 7*gib, snap.Processes[0].Bytes)
	assert.Empty(t, snap.Processes[0].Series, "only the failing process's history is copied")

	snap, ok = s.Snapshot(Query{Host: "node1", At: t0.Add(25*time.Second + 300*time.Millisecond), PID: 42, DeviceIndex: -1})
	require.True(t, ok)
	assert.Len(t, snap.Processes[0].Series, 26)
}

func TestOutOfOrderAndDuplicatesClassifySame(t *testing.T) {
	inOrder, shuffled := New(testConfig()), New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	var batches [][]Sample
	for i := 0; i < 30; i++ {
		batches = append(batches, scrape(sec(i), int64(i), map[int]int64{7: int64(i)}))
	}
	for _, b := range batches {
		inOrder.Observe(k, GPUInfo{Index: -1}, b)
	}
	for i := len(batches) - 1; i >= 0; i-- {
		shuffled.Observe(k, GPUInfo{Index: -1}, batches[i])
		shuffled.Observe(k, GPUInfo{Index: -1}, batches[i]) // duplicate delivery
	}
	q := Query{At: t0.Add(17 * time.Second), PID: 7, DeviceIndex: -1}
	a, okA := inOrder.Snapshot(q)
	b, okB := shuffled.Snapshot(q)
	require.True(t, okA && okB)
	assert.Equal(t, a, b)
}

func TestWindowForgetsOldDataAndProcesses(t *testing.T) {
	cfg := testConfig()
	cfg.Window = 10 * time.Second
	s := New(cfg)
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(0), 1, map[int]int64{1: 1}))
	for i := 1; i <= 30; i++ {
		s.Observe(k, GPUInfo{Index: -1}, scrape(sec(i), 2, map[int]int64{2: 1}))
	}
	snap, ok := s.Snapshot(Query{At: t0.Add(30 * time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Len(t, snap.Usage, 11, "points from 20 s to 30 s")
	require.Len(t, snap.Processes, 1)
	assert.Equal(t, 2, snap.Processes[0].PID, "pid 1 left the window and is forgotten")
}

func TestCapsEvictOldestAndCount(t *testing.T) {
	cfg := testConfig()
	cfg.MaxGPUs, cfg.MaxSamplesPerGPU, cfg.MaxProcessesPerGPU = 2, 5, 2
	s := New(cfg)
	s.Observe(GPUKey{HWID: "GPU-old"}, GPUInfo{Index: -1}, scrape(sec(0), 1, nil))
	s.Observe(GPUKey{HWID: "GPU-mid"}, GPUInfo{Index: -1}, scrape(sec(1), 1, nil))
	of := s.Observe(GPUKey{HWID: "GPU-new"}, GPUInfo{Index: -1}, scrape(sec(2), 1, nil))
	assert.Equal(t, 1, of.GPUsEvicted)
	assert.Equal(t, 2, s.Len())
	assert.NotContains(t, s.hosts[""].gpus, "GPU-old", "the least recently updated GPU goes first")

	var capped, evicted int
	for i := 3; i < 13; i++ {
		of = s.Observe(GPUKey{HWID: "GPU-new"}, GPUInfo{Index: -1}, scrape(sec(i), 1, map[int]int64{100 + i: 1}))
		capped += of.SamplesCapped
		evicted += of.ProcessesEvicted
	}
	assert.Positive(t, capped)
	assert.Equal(t, 8, evicted, "ten processes through a cap of two")
	snap, ok := s.Snapshot(Query{At: t0.Add(12 * time.Second), DeviceIndex: -1, PID: 112})
	require.True(t, ok)
	assert.Len(t, snap.Usage, 5)
	assert.Equal(t, MatchedByPID, snap.MatchedBy)
}

func TestLabelledAndFlags(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Used, T: sec(0), V: 1},
		{Kind: RetiredPages, T: sec(0), V: 3, Label: "double_bit_ecc"},
		{Kind: RemappedRows, T: sec(0), V: 2, Label: "uncorrectable"},
		{Kind: RemapFailed, T: sec(0), V: 0},
		{Kind: RemapFailed, T: sec(5), V: 1},
		{Kind: Kind(200), T: sec(0), V: 1},
	})
	var rejected int
	for i := 0; i < 10; i++ {
		rejected += s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: RetiredPages, T: sec(1), V: 1, Label: string(rune('a' + i))}}).LabelsRejected
	}
	assert.Equal(t, 3, rejected, "one real label plus seven junk ones fill the eight slots")
	snap, ok := s.Snapshot(Query{At: t0.Add(2 * time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, int64(3), snap.RetiredPages["double_bit_ecc"])
	assert.Equal(t, map[string]int64{"uncorrectable": 2}, snap.RemappedRows)
	assert.False(t, snap.RemapFailed, "failed only from 5 s on")
	snap, _ = s.Snapshot(Query{At: t0.Add(6 * time.Second), PID: -1, DeviceIndex: -1})
	assert.True(t, snap.RemapFailed)
}

func TestXidsByHWIDOrBusIDAndCapped(t *testing.T) {
	s := New(testConfig())
	s.Observe(GPUKey{Host: "h", HWID: "GPU-a"}, GPUInfo{BusID: "0000:3b:00.0", Index: 0}, scrape(sec(0), 1, nil))
	s.Observe(GPUKey{Host: "h", HWID: "GPU-b"}, GPUInfo{BusID: "0000:86:00.0", Index: 1}, scrape(sec(0), 1, nil))
	s.ObserveXid("h", Xid{T: t0.Add(time.Second), Code: 79, Fault: true, BusID: "0000:3b:00.0"})
	s.ObserveXid("h", Xid{T: t0, Code: 13, HWID: "GPU-a"})
	s.ObserveXid("h", Xid{T: t0, Code: 31, HWID: "GPU-b"})
	s.ObserveXid("h", Xid{T: t0.Add(-time.Hour), Code: 48, HWID: "GPU-a"}) // outside the window
	snap, ok := s.Snapshot(Query{Host: "h", At: t0, PID: -1, DeviceIndex: 0})
	require.True(t, ok)
	require.Len(t, snap.Xids, 2)
	assert.Equal(t, 13, snap.Xids[0].Code, "sorted by time")
	assert.Equal(t, 79, snap.Xids[1].Code)

	var capped int
	for i := 0; i < 10; i++ {
		capped += s.ObserveXid("h", Xid{T: t0.Add(time.Duration(i) * time.Second), Code: 43}).XidsCapped
	}
	assert.Equal(t, 9, capped, "three kept plus ten new through a cap of four (48 left by age)")
}

func TestCovered(t *testing.T) {
	s := New(testConfig())
	assert.False(t, s.Covered("h", t0))
	s.Observe(GPUKey{Host: "h", HWID: "GPU-a"}, GPUInfo{Index: -1}, scrape(sec(1), 1, nil))
	assert.True(t, s.Covered("h", t0.Add(time.Second)))
	assert.False(t, s.Covered("h", t0.Add(1500*time.Millisecond)))
	assert.False(t, s.Covered("other", t0))
}

// TestProcessOrderCacheFollowsChanges: the i-th process sample is looked up at the i-th
// place of the previous collection first; a reordered, new or forgotten process must still
// land in its own series, and a process dropped from the window must not be written to
// through the cache.
func TestProcessOrderCacheFollowsChanges(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	procs := func(at int64, pids ...int) []Sample {
		ss := []Sample{{Kind: Used, T: at, V: 1}}
		for _, pid := range pids {
			ss = append(ss, Sample{Kind: ProcessBytes, T: at, V: int64(pid), Process: ProcessInfo{PID: pid, Name: "p" + strconv.Itoa(pid)}})
		}
		return ss
	}
	bytesAt := func(at int64) map[int]int64 {
		snap, ok := s.Snapshot(Query{At: time.Unix(0, at), PID: -1, DeviceIndex: -1})
		require.True(t, ok)
		out := map[int]int64{}
		for _, p := range snap.Processes {
			out[p.PID] = p.Bytes
			assert.Equal(t, "p"+strconv.Itoa(p.PID), p.Name)
		}
		return out
	}
	s.Observe(k, GPUInfo{Index: -1}, procs(sec(0), 1, 2, 3))
	s.Observe(k, GPUInfo{Index: -1}, procs(sec(1), 3, 1, 4)) // reordered, 2 gone, 4 new
	assert.Equal(t, map[int]int64{1: 1, 3: 3, 4: 4}, bytesAt(sec(1)))
	s.Observe(k, GPUInfo{Index: -1}, procs(sec(2), 3, 1, 4))
	assert.Equal(t, map[int]int64{1: 1, 3: 3, 4: 4}, bytesAt(sec(2)))

	// Every process leaves the window while the cache still lists them, then 3 and 1 come
	// back in the same places.
	late := sec(0) + int64(testConfig().Window) + int64(time.Minute)
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: late, V: 1}})
	require.Empty(t, s.hosts[""].gpus["GPU-a"].procs, "forgotten by the trim")
	require.Empty(t, s.hosts[""].gpus["GPU-a"].order, "the cache keeps no forgotten process alive")
	s.Observe(k, GPUInfo{Index: -1}, procs(late+int64(time.Second), 3, 1))
	assert.Equal(t, map[int]int64{1: 1, 3: 3}, bytesAt(late+int64(time.Second)), "written to live entries, not the forgotten ones")

	// With room for two, pid 9 evicts pid 1 (the oldest) while the cache still lists pid 1
	// at the place of the next sample.
	cfg := testConfig()
	cfg.MaxProcessesPerGPU = 2
	s = New(cfg)
	s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: ProcessBytes, T: sec(1), V: 2, Process: ProcessInfo{PID: 2, Name: "p2"}},
		{Kind: ProcessBytes, T: sec(0), V: 1, Process: ProcessInfo{PID: 1, Name: "p1"}},
	})
	of := s.Observe(k, GPUInfo{Index: -1}, procs(sec(2), 9, 1))
	assert.Equal(t, 2, of.ProcessesEvicted)
	assert.Equal(t, map[int]int64{1: 1, 9: 9}, bytesAt(sec(2)), "pid 1 comes back as a live entry")
}

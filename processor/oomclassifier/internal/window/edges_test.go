package window

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests here pin the store's bounds at their edges: each limit the package documents is
// inclusive on the believable side, and one step past it is refused.

// TestFutureBoundIsInclusive: a point exactly MaxAhead past the clock is believed (clocks a
// little apart are normal), one nanosecond more is not, and "caught up" follows the accepted one.
func TestFutureBoundIsInclusive(t *testing.T) {
	cfg := testConfig()
	cfg.MaxAhead = time.Minute
	now := t0.Add(time.Hour)
	cfg.Now = func() time.Time { return now }
	s := New(cfg)
	k := GPUKey{Host: "h", HWID: "GPU-a"}
	edge := now.Add(time.Minute).UnixNano()
	of := s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: edge, V: gib}})
	assert.Zero(t, of.FutureRejected, "exactly MaxAhead ahead")
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: edge + 1, V: gib}})
	assert.Equal(t, 1, of.FutureRejected, "one nanosecond past MaxAhead")
	assert.True(t, s.Covered("h", time.Unix(0, edge)), "covered at the newest accepted point")
	assert.False(t, s.Covered("h", time.Unix(0, edge+1)), "not by the rejected one")
}

// TestValueBoundsAreInclusive: zero, a value equal to the GPU's limit, 64 TiB of capacity and
// 2^32 pages or rows are all possible; one more (or a negative value) is not.
func TestValueBoundsAreInclusive(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	of := s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Total, T: sec(0), V: maxPlausibleBytes},
		{Kind: Used, T: sec(0), V: maxPlausibleBytes},
		{Kind: Free, T: sec(0), V: 0},
		{Kind: RetiredPages, T: sec(0), V: maxPlausibleCount, Label: "sbe"},
		{Kind: RemappedRows, T: sec(0), V: maxPlausibleCount, Label: "correctable"},
		{Kind: RemapFailed, T: sec(0), V: maxPlausibleCount},
	})
	require.Zero(t, of.ValuesRejected)
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Total, T: sec(1), V: maxPlausibleBytes + 1},
		{Kind: Used, T: sec(1), V: maxPlausibleBytes + 1},
		{Kind: Free, T: sec(1), V: -1},
		{Kind: RetiredPages, T: sec(1), V: maxPlausibleCount + 1, Label: "sbe"},
		{Kind: RemappedRows, T: sec(1), V: maxPlausibleCount + 1, Label: "correctable"},
		{Kind: RetiredPagesPending, T: sec(1), V: maxPlausibleCount + 1},
		{Kind: RemapPending, T: sec(1), V: maxPlausibleCount + 1},
	})
	assert.Equal(t, 7, of.ValuesRejected)
	snap, ok := s.Snapshot(Query{At: t0.Add(time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, maxPlausibleBytes, snap.Total)
	assert.Equal(t, maxPlausibleBytes, snap.Used)
	assert.Equal(t, int64(0), snap.Free)
	assert.Equal(t, map[string]int64{"sbe": maxPlausibleCount}, snap.RetiredPages)
	assert.False(t, snap.RetiredPagesPending)

	// Against a stored limit of 80 GiB: 80 GiB in use is a full GPU, a byte more is not real.
	s = New(testConfig())
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(0), 10, nil))
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(1), V: 80 * gib}})
	assert.Zero(t, of.ValuesRejected, "equal to the limit")
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(2), V: 80*gib + 1}})
	assert.Equal(t, 1, of.ValuesRejected, "a byte above the limit")
	// The batch's own limit, even the largest believable one, replaces the stored one.
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Total, T: sec(3), V: maxPlausibleBytes}, {Kind: Used, T: sec(3), V: 100 * gib},
	})
	assert.Zero(t, of.ValuesRejected, "bounded by the batch's limit, not the stored 80 GiB")
}

// TestOnlyBelievableLimitsBound: a capacity of zero or one from a clock too far ahead is no
// limit for the other values of its batch; one stamped exactly at the edge is.
func TestOnlyBelievableLimitsBound(t *testing.T) {
	cfg := testConfig()
	cfg.MaxAhead = time.Minute
	cfg.Now = func() time.Time { return t0 }
	k := GPUKey{HWID: "GPU-a"}

	s := New(cfg)
	of := s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Total, T: sec(0), V: 0}, {Kind: Used, T: sec(0), V: 10 * gib}})
	assert.Zero(t, of.ValuesRejected, "a zero capacity bounds nothing")

	s = New(cfg)
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Total, T: sec(120), V: gib}, {Kind: Used, T: sec(0), V: 10 * gib}})
	assert.Equal(t, 1, of.FutureRejected)
	assert.Zero(t, of.ValuesRejected, "a capacity from the future bounds nothing")

	s = New(cfg)
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Total, T: sec(60), V: gib}, {Kind: Used, T: sec(60), V: 2 * gib}})
	assert.Zero(t, of.FutureRejected)
	assert.Equal(t, 1, of.ValuesRejected, "a capacity exactly MaxAhead ahead is accepted and bounds")
}

// TestByteBudgetIsInclusiveAndAccountsEviction: a store exactly at max_bytes evicts nothing;
// one GPU more evicts the least recently updated one, and what is counted afterwards is what
// is left, neither more nor less.
func TestByteBudgetIsInclusiveAndAccountsEviction(t *testing.T) {
	cfg := testConfig()
	feed := func(s *Store, ids ...string) (evicted int) {
		for i := 0; i < 40; i++ {
			for _, id := range ids {
				of := s.Observe(GPUKey{Host: "h", HWID: id}, GPUInfo{Index: -1}, scrape(sec(i), int64(i%7), map[int]int64{7: int64(i % 5)}))
				evicted += of.GPUsEvicted
			}
		}
		return evicted
	}
	one := New(cfg)
	feed(one, "GPU-b")
	both := New(cfg)
	require.Zero(t, feed(both, "GPU-a", "GPU-b"))
	require.Equal(t, 2*one.Bytes(), both.Bytes(), "each GPU is counted on its own")

	cfg.MaxBytes = both.Bytes()
	s := New(cfg)
	assert.Zero(t, feed(s, "GPU-a", "GPU-b"), "exactly at the budget")
	assert.Equal(t, 2, s.Len())

	// A new GPU pushes the store over: the least recently updated GPU goes, and only it.
	fresh := New(testConfig())
	fresh.Observe(GPUKey{Host: "h", HWID: "GPU-c"}, GPUInfo{Index: -1}, scrape(sec(40), 1, nil))
	of := s.Observe(GPUKey{Host: "h", HWID: "GPU-c"}, GPUInfo{Index: -1}, scrape(sec(40), 1, nil))
	assert.Equal(t, 1, of.GPUsEvicted)
	assert.NotContains(t, s.hosts["h"].gpus, "GPU-a")
	assert.Equal(t, one.Bytes()+fresh.Bytes(), s.Bytes(), "the evicted GPU's bytes leave the count")
}

// TestGPUCapIsInclusive: MaxGPUs GPUs fit; the next one evicts exactly one.
func TestGPUCapIsInclusive(t *testing.T) {
	cfg := testConfig()
	cfg.MaxGPUs = 4
	s := New(cfg)
	for i := 0; i < 4; i++ {
		require.Zero(t, s.Observe(GPUKey{HWID: "GPU-" + strconv.Itoa(i)}, GPUInfo{Index: i}, scrape(sec(i), 1, nil)).GPUsEvicted)
	}
	assert.Equal(t, 4, s.Len())
	assert.Equal(t, 1, s.Observe(GPUKey{HWID: "GPU-4"}, GPUInfo{Index: 4}, scrape(sec(4), 1, nil)).GPUsEvicted)
	assert.Equal(t, 4, s.Len())
	assert.NotContains(t, s.hosts[""].gpus, "GPU-0")
}

// TestEvictionForgetsEmptyHosts: a host whose last GPU is evicted is forgotten (a gateway's
// churn of nodes must not grow the host map), unless it still holds Xids as evidence or is the
// host the new GPU belongs to.
func TestEvictionForgetsEmptyHosts(t *testing.T) {
	cfg := testConfig()
	cfg.MaxGPUs = 1
	s := New(cfg)
	obs := func(host, id string, at int64) {
		s.Observe(GPUKey{Host: host, HWID: id}, GPUInfo{Index: 0}, scrape(at, 1, nil))
	}
	obs("x", "GPU-x", sec(0))
	s.ObserveXid("y", Xid{T: t0, Code: 79, Fault: true, HWID: "GPU-y"})
	obs("y", "GPU-y0", sec(0)) // evicts GPU-x
	assert.NotContains(t, s.hosts, "x", "nothing left of host x")
	obs("z", "GPU-z", sec(0)) // evicts GPU-y0; y keeps its Xid
	require.Contains(t, s.hosts, "y")
	obs("y", "GPU-y", sec(1)) // evicts GPU-z
	snap, ok := s.Snapshot(Query{Host: "y", At: t0.Add(time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	require.Len(t, snap.Xids, 1, "the Xid outlived the eviction of its host's GPU")
	assert.Equal(t, 79, snap.Xids[0].Code)

	// The host being updated stays even while its only GPU makes room for its new one.
	obs("y", "GPU-y2", sec(2))
	snap, ok = s.Snapshot(Query{Host: "y", At: t0.Add(2 * time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Equal(t, "GPU-y2", snap.HWID)
}

// TestLatePointAtTheWindowEdgeIsMerged: a late point exactly one window before the GPU's
// newest is inside the window; one nanosecond older is not stored.
func TestLatePointAtTheWindowEdgeIsMerged(t *testing.T) {
	s := New(testConfig()) // 15 min
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(50), V: 1}})
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(1000), V: 2}})
	edge := sec(1000) - int64(15*time.Minute)
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: edge, V: 3}})
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: edge - 1, V: 4}})
	g := s.hosts[""].gpus["GPU-a"]
	assert.Equal(t, []Point{{sec(50), 1}, {edge, 3}, {sec(1000), 2}}, all(&g.gauges[Used]))
	// The same edge for a process's points.
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: ProcessBytes, T: edge, V: 5, Process: ProcessInfo{PID: 1}}})
	s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: ProcessBytes, T: edge - 1, V: 6, Process: ProcessInfo{PID: 2}}})
	require.Contains(t, g.procs, 1)
	assert.Equal(t, []Point{{edge, 5}}, all(&g.procs[1].s))
	assert.NotContains(t, g.procs, 2)
}

// TestWindowIsTrimmedAsItSlides: the periodic trim keeps at most a 64th of the window of
// extra history (plus the baseline point before it), however long the GPU reports.
func TestWindowIsTrimmedAsItSlides(t *testing.T) {
	cfg := testConfig()
	cfg.Window = 64 * time.Second
	s := New(cfg)
	k := GPUKey{HWID: "GPU-a"}
	for i := 0; i <= 1000; i++ {
		s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(i), V: int64(i)}})
		ps := all(&s.hosts[""].gpus["GPU-a"].gauges[Used])
		require.GreaterOrEqual(t, ps[0].T, sec(i-64-1-1), "second %d", i)
		require.LessOrEqual(t, len(ps), 64+1+1+1, "second %d", i)
	}
}

// TestSampleCapKeepsTheNewestExactly: a series holds MaxSamplesPerGPU points, the newest, and
// counts each point dropped for the cap.
func TestSampleCapKeepsTheNewestExactly(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSamplesPerGPU = 10
	s := New(cfg)
	k := GPUKey{HWID: "GPU-a"}
	capped := 0
	for i := 0; i < 10; i++ {
		capped += s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(i), V: int64(i)}}).SamplesCapped
	}
	assert.Zero(t, capped, "exactly at the cap")
	for i := 10; i < 15; i++ {
		capped += s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: Used, T: sec(i), V: int64(i)}}).SamplesCapped
	}
	assert.Equal(t, 5, capped)
	ps := all(&s.hosts[""].gpus["GPU-a"].gauges[Used])
	require.Len(t, ps, 10)
	assert.Equal(t, Point{sec(5), 5}, ps[0])
	assert.Equal(t, Point{sec(14), 14}, ps[9])
}

// TestProcessCapEvictsTheLeastRecentlyReporting: at the cap, the process whose newest sample
// is oldest makes room; the others keep their history. Up to the cap nothing is evicted.
func TestProcessCapEvictsTheLeastRecentlyReporting(t *testing.T) {
	cfg := testConfig()
	cfg.MaxProcessesPerGPU = 3
	s := New(cfg)
	k := GPUKey{HWID: "GPU-a"}
	proc := func(pid, at int) Sample {
		return Sample{Kind: ProcessBytes, T: sec(at), V: gib, Process: ProcessInfo{PID: pid}}
	}
	of := s.Observe(k, GPUInfo{Index: -1}, []Sample{proc(1, 5), proc(2, 3), proc(3, 4)})
	assert.Zero(t, of.ProcessesEvicted, "exactly at the cap")
	of = s.Observe(k, GPUInfo{Index: -1}, []Sample{proc(4, 6)})
	assert.Equal(t, 1, of.ProcessesEvicted)
	g := s.hosts[""].gpus["GPU-a"]
	assert.NotContains(t, g.procs, 2, "pid 2 reported last at 3 s")
	assert.Contains(t, g.procs, 1)
	assert.Contains(t, g.procs, 3)
	assert.Contains(t, g.procs, 4)
}

// TestNewestProcessDescriptionWins: a late sample does not rename a process, one at its newest
// time does (a container restart reuses the pid under a new name).
func TestNewestProcessDescriptionWins(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	p := func(at int, name string) []Sample {
		return []Sample{{Kind: Used, T: sec(at), V: gib}, {Kind: ProcessBytes, T: sec(at), V: gib, Process: ProcessInfo{PID: 7, Name: name}}}
	}
	name := func() string {
		snap, ok := s.Snapshot(Query{At: t0.Add(10 * time.Second), PID: -1, DeviceIndex: -1})
		require.True(t, ok)
		require.Len(t, snap.Processes, 1)
		return snap.Processes[0].Name
	}
	s.Observe(k, GPUInfo{Index: -1}, p(10, "train"))
	s.Observe(k, GPUInfo{Index: -1}, p(5, "late"))
	assert.Equal(t, "train", name())
	s.Observe(k, GPUInfo{Index: -1}, p(10, "train-v2"))
	assert.Equal(t, "train-v2", name())
}

// TestLabelCapIsInclusive: eight labels of a stream are kept, the ninth is refused and
// counted, and the kept ones still update.
func TestLabelCapIsInclusive(t *testing.T) {
	s := New(testConfig())
	k := GPUKey{HWID: "GPU-a"}
	var batch []Sample
	for i := 0; i < maxLabels; i++ {
		batch = append(batch, Sample{Kind: RemappedRows, T: sec(0), V: int64(i), Label: "l" + strconv.Itoa(i)})
	}
	require.Zero(t, s.Observe(k, GPUInfo{Index: -1}, batch).LabelsRejected)
	of := s.Observe(k, GPUInfo{Index: -1}, []Sample{
		{Kind: Used, T: sec(1), V: gib},
		{Kind: RemappedRows, T: sec(1), V: 1, Label: "ninth"},
		{Kind: RemappedRows, T: sec(1), V: 100, Label: "l0"},
	})
	assert.Equal(t, 1, of.LabelsRejected)
	snap, ok := s.Snapshot(Query{At: t0.Add(time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Len(t, snap.RemappedRows, maxLabels)
	assert.Equal(t, int64(100), snap.RemappedRows["l0"])
	assert.NotContains(t, snap.RemappedRows, "ninth")
	assert.Nil(t, snap.RetiredPages, "the other labelled stream is apart")
}

// TestXidWindowIsInclusive: a host keeps the Xids of one window back from its newest, the
// oldest exactly at the edge included, sorted by time whatever the arrival order.
func TestXidWindowIsInclusive(t *testing.T) {
	cfg := testConfig() // 15 min, 4 per host
	s := New(cfg)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	times := func() []time.Duration {
		var out []time.Duration
		for _, x := range s.hosts["h"].xids {
			out = append(out, x.T.Sub(t0))
		}
		return out
	}
	s.ObserveXid("h", Xid{T: at(15 * time.Minute), Code: 1})
	s.ObserveXid("h", Xid{T: at(0), Code: 2})
	s.ObserveXid("h", Xid{T: at(time.Minute), Code: 3})
	assert.Equal(t, []time.Duration{0, time.Minute, 15 * time.Minute}, times())
	s.ObserveXid("h", Xid{T: at(15*time.Minute + 1), Code: 4})
	assert.Equal(t, []time.Duration{time.Minute, 15 * time.Minute, 15*time.Minute + 1}, times(), "0 left by age")
	assert.Zero(t, s.ObserveXid("h", Xid{T: at(2 * time.Minute), Code: 5}).XidsCapped, "exactly at the cap")
	assert.Equal(t, 1, s.ObserveXid("h", Xid{T: at(3 * time.Minute), Code: 6}).XidsCapped)
	assert.Equal(t, []time.Duration{2 * time.Minute, 3 * time.Minute, 15 * time.Minute, 15*time.Minute + 1}, times(), "the oldest goes for the cap")
}

// TestProcessSampleOlderThanTheWindowEvictsNothing: a process point too old to be stored must
// not create an (empty) process entry, which at the cap would push out a live process.
func TestProcessSampleOlderThanTheWindowEvictsNothing(t *testing.T) {
	cfg := testConfig()
	cfg.MaxProcessesPerGPU = 2
	s := New(cfg)
	k := GPUKey{HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: -1}, scrape(sec(1000), 1, map[int]int64{1: 1, 2: 1}))
	before := s.Bytes()
	of := s.Observe(k, GPUInfo{Index: -1}, []Sample{{Kind: ProcessBytes, T: sec(0), V: gib, Process: ProcessInfo{PID: 3}}})
	assert.Zero(t, of.ProcessesEvicted)
	g := s.hosts[""].gpus["GPU-a"]
	assert.Contains(t, g.procs, 1)
	assert.Contains(t, g.procs, 2)
	assert.NotContains(t, g.procs, 3)
	assert.Equal(t, before, s.Bytes())
	snap, ok := s.Snapshot(Query{At: t0.Add(1000 * time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	assert.Len(t, snap.Processes, 2)
}

// TestZeroXidCapMeansNoCap: as for the other caps, zero means none (Config): every Xid of the
// window is kept.
func TestZeroXidCapMeansNoCap(t *testing.T) {
	cfg := testConfig()
	cfg.MaxXidsPerHost = 0
	s := New(cfg)
	for i := 0; i < 50; i++ {
		require.Zero(t, s.ObserveXid("h", Xid{T: t0.Add(time.Duration(i) * time.Second), Code: 43}).XidsCapped)
	}
	assert.Len(t, s.hosts["h"].xids, 50)
}

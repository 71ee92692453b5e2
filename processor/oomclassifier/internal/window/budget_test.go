package window

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEvictsLeastRecentlyUpdated: the GPU that went longest without an update goes first,
// whatever the times its points carry: a late sender's GPU updated just now stays.
func TestEvictsLeastRecentlyUpdated(t *testing.T) {
	cfg := testConfig()
	cfg.MaxGPUs = 3
	s := New(cfg)
	s.Observe(GPUKey{HWID: "GPU-a"}, GPUInfo{Index: -1}, scrape(sec(0), 1, nil))
	s.Observe(GPUKey{HWID: "GPU-b"}, GPUInfo{Index: -1}, scrape(sec(10), 1, nil))
	s.Observe(GPUKey{HWID: "GPU-c"}, GPUInfo{Index: -1}, scrape(sec(20), 1, nil))
	s.Observe(GPUKey{HWID: "GPU-a"}, GPUInfo{Index: -1}, scrape(sec(1), 1, nil)) // late data, fresh update
	of := s.Observe(GPUKey{HWID: "GPU-d"}, GPUInfo{Index: -1}, scrape(sec(30), 1, nil))
	assert.Equal(t, 1, of.GPUsEvicted)
	assert.Contains(t, s.hosts[""].gpus, "GPU-a")
	assert.NotContains(t, s.hosts[""].gpus, "GPU-b")
	of = s.Observe(GPUKey{HWID: "GPU-e"}, GPUInfo{Index: -1}, scrape(sec(31), 1, nil))
	assert.Equal(t, 1, of.GPUsEvicted)
	assert.NotContains(t, s.hosts[""].gpus, "GPU-c")
	assert.Equal(t, 3, s.Len())
}

// TestByteBudgetEvicts: past max_bytes the least recently updated GPUs go, the budget holds
// after every observation, and the GPU being updated is never evicted for its own sake.
func TestByteBudgetEvicts(t *testing.T) {
	cfg := defaultConfig()
	cfg.MaxBytes = 200 << 10
	s := New(cfg)
	r := rand.New(rand.NewPCG(1, 2))
	evicted := 0
	for sec := 0; sec < 300; sec++ {
		at := sec0(sec) + jitter(r)
		for g := 0; g < 16; g++ {
			of := s.Observe(GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, fleetCollection(r, g, sec, at))
			evicted += of.GPUsEvicted
			require.LessOrEqual(t, s.Bytes(), cfg.MaxBytes, "second %d GPU %d", sec, g)
		}
	}
	assert.Positive(t, evicted)
	assert.Contains(t, s.hosts["node"].gpus, "GPU-15", "the GPU updated last stays")
	// A single GPU over the budget is kept: evicting it would leave nothing to classify against.
	cfg.MaxBytes = 1
	s = New(cfg)
	for sec := 0; sec < 10; sec++ {
		s.Observe(GPUKey{HWID: "GPU-0"}, GPUInfo{Index: 0}, fleetCollection(r, 0, sec, sec0(sec)))
	}
	assert.Equal(t, 1, s.Len())
	_, ok := s.Snapshot(Query{At: t0.Add(9 * time.Second), PID: -1, DeviceIndex: -1})
	assert.True(t, ok)
}

// TestBytesTracksHeap: what the budget counts is the heap the window holds, within 15%, so
// max_bytes means what it says.
func TestBytesTracksHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a full window of 8 GPUs")
	}
	for _, gen := range []func(r *rand.Rand, g, sec int, at int64) []Sample{
		func(_ *rand.Rand, g, sec int, at int64) []Sample { return builtinCollection(g, sec, at) },
		fleetCollection,
	} {
		var before, after runtime.MemStats
		settle()
		runtime.ReadMemStats(&before)
		s := New(defaultConfig())
		r := rand.New(rand.NewPCG(1, 2))
		for sec := 0; sec < 1200; sec++ {
			at := sec0(sec) + jitter(r)
			for g := 0; g < 8; g++ {
				s.Observe(GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, gen(r, g, sec, at))
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
		t.Logf("accounted %d bytes, heap %.0f (%.1f%%)", s.Bytes(), heap, 100*float64(s.Bytes())/heap)
		assert.InEpsilon(t, heap, float64(s.Bytes()), 0.15)
		runtime.KeepAlive(s)
	}
}

// TestEvictionAtScaleDoesNotScan reproduces the finding: at 12k GPUs with a 10k cap, a
// round of one point per GPU took 2.1 s because each arrival past the cap scanned every GPU.
func TestEvictionAtScaleDoesNotScan(t *testing.T) {
	if testing.Short() {
		t.Skip("12k GPUs")
	}
	cfg := defaultConfig()
	cfg.MaxGPUs = 10_000
	s := New(cfg)
	keys := make([]GPUKey, 12_000)
	for i := range keys {
		keys[i] = GPUKey{Host: "node" + strconv.Itoa(i/8), HWID: "GPU-" + strconv.Itoa(i)}
	}
	round := func(sec int) (time.Duration, int) {
		start, evicted := time.Now(), 0
		for i, k := range keys {
			evicted += s.Observe(k, GPUInfo{Index: i % 8}, scrape(sec0(sec), 1, nil)).GPUsEvicted
		}
		return time.Since(start), evicted
	}
	round(0)
	d, evicted := round(1)
	assert.Equal(t, 12_000, evicted, "round-robin through a smaller cap: every arrival evicts")
	assert.Equal(t, 10_000, s.Len())
	// Linear scans took seconds; O(1) eviction takes milliseconds (a generous bound for a
	// loaded CI machine).
	assert.Less(t, d, time.Second, "one round of 12k GPUs")
}

// BenchmarkEvictAtCap is one GPU arriving at a full store of 10k GPUs (12k cycling), each
// arrival evicting the least recently updated.
func BenchmarkEvictAtCap(b *testing.B) {
	cfg := defaultConfig()
	cfg.MaxGPUs = 10_000
	s := New(cfg)
	keys := make([]GPUKey, 12_000)
	for i := range keys {
		keys[i] = GPUKey{Host: "node" + strconv.Itoa(i/8), HWID: "GPU-" + strconv.Itoa(i)}
	}
	batch := scrape(sec0(0), 1, nil)
	for i, k := range keys {
		s.Observe(k, GPUInfo{Index: i % 8}, batch)
	}
	b.ReportAllocs()
	b.ResetTimer()
	evicted := 0
	for i := 0; i < b.N; i++ {
		for j := range batch {
			batch[j].T = sec0(1 + i/len(keys))
		}
		evicted += s.Observe(keys[i%len(keys)], GPUInfo{Index: i % 8}, batch).GPUsEvicted
	}
	if b.N > len(keys) && evicted < b.N-len(keys) {
		b.Fatalf("%d evictions in %d arrivals", evicted, b.N)
	}
}

// recount is what Bytes should be: each GPU's fixed cost and every array it holds, summed
// afresh rather than followed incrementally.
func recount(s *Store) int64 {
	var n int64
	for _, h := range s.hosts {
		for _, g := range h.gpus {
			n += gpuBytes
			for i := range g.gauges {
				n += g.gauges[i].footprint()
			}
			for _, m := range g.labelled {
				for _, ls := range m {
					n += ls.footprint()
				}
			}
			for _, p := range g.procs {
				n += procBytes + nameBytes(&p.info) + p.s.footprint()
			}
			for i := range g.allocs {
				n += allocCost(&g.allocs[i].Allocation)
			}
		}
	}
	return n
}

// TestBytesStaysTheSumOfWhatIsHeld: through process churn (new, capped, aged out), sample
// caps, trims and GPU evictions, the incrementally kept count never drifts from a recount.
func TestBytesStaysTheSumOfWhatIsHeld(t *testing.T) {
	cfg := testConfig()
	cfg.Window = 64 * time.Second
	cfg.MaxGPUs, cfg.MaxProcessesPerGPU, cfg.MaxSamplesPerGPU = 3, 3, 100
	s := New(cfg)
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 600; i++ {
		g := r.IntN(4)
		procs := map[int]int64{}
		for k := 0; k < 1+r.IntN(4); k++ {
			procs[100*g+r.IntN(6)] = int64(r.IntN(8))
		}
		ss := scrape(sec(i), int64(r.IntN(40)), procs)
		ss = append(ss, Sample{Kind: RetiredPages, T: sec(i), V: int64(i / 50), Label: "sbe"})
		s.Observe(GPUKey{Host: "h" + strconv.Itoa(g%2), HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, ss)
		require.Equal(t, recount(s), s.Bytes(), "after observation %d", i)
	}
}

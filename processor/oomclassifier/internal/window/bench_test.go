package window

import (
	"runtime"
	"strconv"
	"testing"
	"time"
)

// realistic scrape of one GPU: 5 memory series and 16 processes, like an 8-way training node.
func benchScrape(at int64, i int) []Sample {
	ss := make([]Sample, 0, 24)
	for k := Used; k <= Unattributed; k++ {
		ss = append(ss, Sample{Kind: k, T: at, V: int64(i%100) << 20})
	}
	for p := 0; p < 16; p++ {
		ss = append(ss, Sample{Kind: ProcessBytes, T: at, V: int64(p+i%7) << 20,
			Process: ProcessInfo{PID: 1000 + p, Name: "python", ContainerID: "c0ffee", Type: "compute"}})
	}
	return ss
}

func defaultConfig() Config {
	return Config{Window: 15 * time.Minute, MaxGPUs: 1024, MaxSamplesPerGPU: 1125, MaxProcessesPerGPU: 256, MaxXidsPerHost: 1024}
}

// BenchmarkObserve is one GPU's collection (21 points) into a warm, full window.
func BenchmarkObserve(b *testing.B) {
	s := New(defaultConfig())
	k := GPUKey{Host: "node", HWID: "GPU-0"}
	for i := 0; i < 900; i++ {
		s.Observe(k, GPUInfo{Index: 0}, benchScrape(sec(i), i))
	}
	bt := benchScrape(sec(900), 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Timestamps keep advancing so the window slides as in production.
		for j := range bt {
			bt[j].T += int64(time.Second)
		}
		s.Observe(k, GPUInfo{Index: 0}, bt)
	}
}

// BenchmarkObserveLate is BenchmarkObserve with every other collection arriving after the
// next one (two exporters racing): each late point is merged into its compressed series.
func BenchmarkObserveLate(b *testing.B) {
	s := New(defaultConfig())
	k := GPUKey{Host: "node", HWID: "GPU-0"}
	for i := 0; i < 900; i++ {
		s.Observe(k, GPUInfo{Index: 0}, benchScrape(sec(i), i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// 901, 900, 903, 902, ...: collections swapped in pairs.
		n := 900 + i ^ 1
		b.StopTimer()
		bt := benchScrape(sec(n), n)
		b.StartTimer()
		s.Observe(k, GPUInfo{Index: 0}, bt)
	}
}

// BenchmarkSnapshot matches and copies the state of one of 8 GPUs with a full 15 min window.
func BenchmarkSnapshot(b *testing.B) {
	s := New(defaultConfig())
	for g := 0; g < 8; g++ {
		for i := 0; i < 900; i++ {
			s.Observe(GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, benchScrape(sec(i), i))
		}
	}
	q := Query{Host: "node", At: t0.Add(899 * time.Second), PID: -1, DeviceIndex: 3}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := s.Snapshot(q); !ok {
			b.Fatal("no match")
		}
	}
}

// BenchmarkSnapshotTo is BenchmarkSnapshot for the failing process, reusing one Snapshot the
// way the processor does: the full window is copied into arrays it already holds.
func BenchmarkSnapshotTo(b *testing.B) {
	s := New(defaultConfig())
	for g := 0; g < 8; g++ {
		for i := 0; i < 900; i++ {
			s.Observe(GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, benchScrape(sec(i), i))
		}
	}
	q := Query{Host: "node", At: t0.Add(899 * time.Second), PID: 1003, DeviceIndex: 3}
	var snap Snapshot
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !s.SnapshotTo(&snap, q) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkSnapshotToPast is BenchmarkSnapshotTo for an OOM 4 s before the newest metrics
// (a gateway receiving them in batches): each series' value then comes from decoding up to
// a checkpoint's worth of points rather than from the newest two, which the series keep.
func BenchmarkSnapshotToPast(b *testing.B) {
	s := New(defaultConfig())
	for g := 0; g < 8; g++ {
		for i := 0; i < 900; i++ {
			s.Observe(GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, benchScrape(sec(i), i))
		}
	}
	q := Query{Host: "node", At: t0.Add(895 * time.Second), PID: 1003, DeviceIndex: 3}
	var snap Snapshot
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !s.SnapshotTo(&snap, q) {
			b.Fatal("no match")
		}
	}
}

// TestMemoryPerGPU checks the design budget: under 1 MiB per GPU for 15 min at 1 s of about ten
// series. Measured with 5 memory series and 16 processes (21 series), so the budget has room.
func TestMemoryPerGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a full window for 8 GPUs")
	}
	const gpus = 8
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := New(defaultConfig())
	for i := 0; i < 1800; i++ { // two windows, so the series have slid and trimmed
		for g := 0; g < gpus; g++ {
			s.Observe(GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, benchScrape(sec(i), i))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perGPU := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / gpus
	t.Logf("window memory per GPU: %d KiB", perGPU>>10)
	if perGPU > 1<<20 {
		t.Fatalf("window memory per GPU %d bytes, want < 1 MiB", perGPU)
	}
	runtime.KeepAlive(s)
}

package window

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkFleetWindow fills a full 15-minute window at 1 s for hosts × 8 GPUs of the built-in
// scenario's shape and reports, per windowed device, the heap the store holds
// (runtime.MemStats after a GC) and the bytes its budget accounts (Bytes, what max_bytes is
// compared against). A gateway's max_bytes for N devices is N × accounted bytes/device; its
// live heap is about N × heap bytes/device. One op is one whole fill.
func BenchmarkFleetWindow(b *testing.B) {
	for _, hosts := range []int{25, 100} {
		b.Run(strconv.Itoa(hosts)+"_hosts", func(b *testing.B) {
			var heap, accounted float64
			for i := 0; i < b.N; i++ {
				heap, accounted = fillFleet(hosts)
			}
			b.ReportMetric(heap, "heap_bytes/device")
			b.ReportMetric(accounted, "accounted_bytes/device")
		})
	}
}

func fillFleet(hosts int) (heapPerDevice, accountedPerDevice float64) {
	var before, after runtime.MemStats
	settle()
	runtime.ReadMemStats(&before)
	s := New(defaultConfig())
	r := rand.New(rand.NewPCG(1, 2))
	names := make([]string, hosts)
	for h := range names {
		names[h] = "node-" + strconv.Itoa(h)
	}
	const secs, gpus = 900, 8
	for sec := 0; sec < secs; sec++ {
		at := sec0(sec) + jitter(r)
		for _, host := range names {
			for g := 0; g < gpus; g++ {
				s.Observe(GPUKey{Host: host, HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, builtinCollection(g, sec, at))
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	devices := float64(hosts * gpus)
	heapPerDevice = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / devices
	accountedPerDevice = float64(s.Bytes()) / devices
	runtime.KeepAlive(s)
	return heapPerDevice, accountedPerDevice
}

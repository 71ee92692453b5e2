package gpumemreceiver

import (
	"context"
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// BenchmarkScrapePmon is BenchmarkScrape with every process sampled busy and persistence and
// compute mode answered: the cost of the new metrics (2 utilization points per process,
// 1 + 3 mode points per GPU) on top of BenchmarkScrape.
func BenchmarkScrapePmon(b *testing.B) {
	gpus := make([]*fakeGPU, 8)
	tree := map[uint32]procEntry{}
	on, mode := true, nvml.COMPUTEMODE_DEFAULT
	for i := range gpus {
		g := newFakeGPU(i)
		g.remap = &[4]int{0, 0, 0, 0}
		g.ecc = &[2]uint64{0, 0}
		g.persistence, g.computeMode = &on, &mode
		for p := 0; p < 16; p++ {
			pid := uint32(1000 + 100*i + p)
			g.compute = append(g.compute, nvml.ProcessInfo{Pid: pid, UsedGpuMemory: uint64(gib)})
			g.pmon = append(g.pmon, nvml.ProcessUtilizationSample{Pid: pid, TimeStamp: 1, SmUtil: 40, MemUtil: 10})
			tree[pid] = procEntry{fmt.Sprintf("worker%d", p), "0::/kubepods/besteffort/pod1b2c3d4e-aaaa-bbbb-cccc-111122223333/" + hex64 + "\n"}
		}
		gpus[i] = g
	}
	r := startWith(b, newFakeNVML(gpus...), procTree(tree))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, g := range gpus {
			g.pmonSince = g.pmonSince[:0]
		}
		if _, err := r.scrapeMetrics(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/8, "ns/gpu")
}

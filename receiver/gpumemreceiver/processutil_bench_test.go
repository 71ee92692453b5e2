package gpumemreceiver

import (
	"context"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// BenchmarkScrapePmon is BenchmarkScrape with every process sampled busy and persistence and
// compute mode answered: the cost of the new metrics (2 utilization points per process,
// 1 + 3 mode points per GPU) on top of BenchmarkScrape.
func BenchmarkScrapePmon(b *testing.B) {
	gpus, tree := benchNode()
	on, mode := true, nvml.COMPUTEMODE_DEFAULT
	for _, g := range gpus {
		g.persistence, g.computeMode = &on, &mode
		for _, p := range g.compute {
			g.pmon = append(g.pmon, nvml.ProcessUtilizationSample{Pid: p.Pid, TimeStamp: 1, SmUtil: 40, MemUtil: 10})
		}
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

package gpumemreceiver

import (
	"context"
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// BenchmarkScrape: one scrape of 8 GPUs × 16 processes on go-nvml's mock (whose call
// recording is part of the cost; see BenchmarkMockCalls to subtract it).
func BenchmarkScrape(b *testing.B) {
	gpus, tree := benchNode()
	r := startWith(b, newFakeNVML(gpus...), procTree(tree))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.scrapeMetrics(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/8, "ns/gpu")
}

// BenchmarkMockCalls is the NVML part of BenchmarkScrape alone: the same calls on the mock.
func BenchmarkMockCalls(b *testing.B) {
	gpus := make([]*fakeGPU, 8)
	for i := range gpus {
		g := newFakeGPU(i)
		g.remap = &[4]int{0, 0, 0, 0}
		g.ecc = &[2]uint64{0, 0}
		for p := 0; p < 16; p++ {
			g.compute = append(g.compute, nvml.ProcessInfo{Pid: uint32(1000 + 100*i + p), UsedGpuMemory: uint64(gib)})
		}
		gpus[i] = g
	}
	lib := newFakeNVML(gpus...)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range lib.devices {
			d.GetMemoryInfo_v2()
			d.GetComputeRunningProcesses()
			d.GetGraphicsRunningProcesses()
			d.GetUtilizationRates()
			d.GetRemappedRows()
			d.GetEccMode()
			d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
			d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
		}
	}
}

// BenchmarkScrapeMIG: one H100 split into 7 × 1g.10gb MIG instances, 2 processes each.
func BenchmarkScrapeMIG(b *testing.B) {
	g := newFakeGPU(0)
	g.remap = &[4]int{0, 0, 0, 0}
	g.ecc = &[2]uint64{0, 0}
	g.mig = &fakeMIG{enabled: true}
	tree := map[uint32]procEntry{}
	for i := 0; i < 7; i++ {
		inst := &fakeInstance{
			uuid: fmt.Sprintf("MIG-%08d-aaaa-bbbb-cccc-dddddddddddd", i), name: "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
			gi: uint32(9 + i), total: 9984 * mib, used: 3 * gib,
		}
		for p := 0; p < 2; p++ {
			pid := uint32(2000 + 10*i + p)
			inst.compute = append(inst.compute, nvml.ProcessInfo{Pid: pid, UsedGpuMemory: uint64(gib)})
			tree[pid] = procEntry{"worker", "0::/\n"}
		}
		g.mig.slots = append(g.mig.slots, inst)
	}
	r := startWith(b, newFakeNVML(g), procTree(tree))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.scrapeMetrics(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/8, "ns/resource")
}

// benchNode is the benchmarks' node: 8 GPUs with 16 containerised processes of 1 GiB each
// (so process.vpid and the container attributes are set), and its /proc.
func benchNode() ([]*fakeGPU, map[uint32]procEntry) {
	gpus := make([]*fakeGPU, 8)
	tree := map[uint32]procEntry{}
	for i := range gpus {
		g := newFakeGPU(i)
		g.remap = &[4]int{0, 0, 0, 0}
		g.ecc = &[2]uint64{0, 0}
		for p := 0; p < 16; p++ {
			pid := uint32(1000 + 100*i + p)
			g.compute = append(g.compute, nvml.ProcessInfo{Pid: pid, UsedGpuMemory: uint64(gib)})
			tree[pid] = procEntry{fmt.Sprintf("worker%d", p), "0::/kubepods/besteffort/pod1b2c3d4e-aaaa-bbbb-cccc-111122223333/" + hex64 + "\n"}
		}
		gpus[i] = g
	}
	return gpus, tree
}

package classify

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// fullWindow is the worst realistic input: 15 minutes at 1 s of GPU usage, 16 processes
// each with its own 900-point series (the failing one leaking), and a few Xids. It adds up:
// 51.6 GiB + 14 × 1.5 GiB + 6 GiB + the driver's 512 MiB fit the 79.6 GiB GPU, so the
// impossible-value check passes it whole (as it must pass real windows).
func fullWindow() (OOM, *GPUState) {
	ps := make([]Process, 16)
	for i := range ps {
		ps[i] = proc(100+i, "python", "aaaa", 1536*mib)
	}
	ps[5] = proc(4242, "other", "bbbb", 6*gib)
	ps[0].Series = series(func(s float64) float64 { return float64(20*gib) + s*float64(36*mib) })
	ps[0].Bytes = int64(ps[0].Series[899].V)
	g := gpuWith(0, ps...)
	setUsageFromProcesses(g)
	g.Xids = []XidEvent{
		{T: oomTime.Add(-10 * time.Minute), Code: 31, Fault: false},
		{T: oomTime.Add(-8 * time.Minute), Code: 63, Fault: false},
		{T: oomTime.Add(-time.Minute), Code: 94, Fault: false},
	}
	return pytorchOOM(2*gib, 300*mib, 50*gib, 51*gib), g
}

func BenchmarkClassify(b *testing.B) {
	oom, g := fullWindow()
	th := DefaultThresholds()
	b.ReportAllocs()
	for b.Loop() {
		_ = Classify(oom, g, th)
	}
}

// TestBenchmarkInput keeps the benchmark honest: its window makes several rules hold,
// the leak fit among them, so every rule runs to its end. The leak (31.6 GiB grown) explains
// more than the 14 helpers' 21 GiB or the tenant's 6 GiB, and nothing is dropped.
func TestBenchmarkInput(t *testing.T) {
	oom, g := fullWindow()
	r := Classify(oom, g, DefaultThresholds())
	checkResult(t, r)
	if strings.Contains(r.Evidence, "impossible") {
		t.Fatalf("benchmark input is not a possible window: %s", r.Evidence)
	}
	if r.Cause != CauseMemoryLeak || !slices.Equal(r.Contributing, []string{CauseOtherTenant, CauseWorkerContextOverhead}) {
		t.Fatalf("benchmark input classifies as %s %v: %s", r.Cause, r.Contributing, r.Evidence)
	}
}

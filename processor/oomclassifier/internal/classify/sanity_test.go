package classify

import (
	"slices"
	"testing"
)

// TestSanitizeBounds: a value is impossible above the capacity it is judged by (the GPU's
// total, else the message's, plus 1/64 for rounding), or above 64 TiB without either; the
// bound itself is kept. A dropped value becomes unknown (-1), so a rule reads the other
// source or abstains.
func TestSanitizeBounds(t *testing.T) {
	const gpuTotal = 64 * gib
	const slack = gpuTotal + gpuTotal/64 // 65 GiB
	withTotal := func(total int64) *GPUState {
		g := gpuWith(0, proc(100, "python", "aaaa", 20*gib))
		g.Total = total
		return g
	}
	// A tenant of the given size on the 64 GiB GPU; used, free and usage unknown, so that
	// only the process is judged.
	withTenant := func(bytes int64) *GPUState {
		g := withTotal(gpuTotal)
		g.Processes = append(g.Processes, proc(300, "other", "bbbb", bytes))
		g.Used, g.Free, g.Usage = -1, -1, nil
		return g
	}
	tests := []struct {
		name    string
		oom     func(o *OOM)
		gpu     *GPUState
		check   func(f *facts) bool
		dropped []string
	}{
		{name: "the message's free at the GPU's total + 1/64 is kept",
			oom: func(o *OOM) { o.TotalBytes, o.FreeBytes = -1, slack }, gpu: withTotal(gpuTotal),
			check: func(f *facts) bool { return f.free == slack }},
		{name: "one byte more is dropped, and the GPU's free is read instead",
			oom: func(o *OOM) { o.TotalBytes, o.FreeBytes = -1, slack+1 }, gpu: withTotal(gpuTotal),
			check:   func(f *facts) bool { return f.oom.FreeBytes == -1 && f.free == f.gpu.Free },
			dropped: []string{"the message's free of 65.0 GiB above the 64.0 GiB total"}},
		{name: "the message's total at the GPU's + 1/64 is a rounding",
			oom: func(o *OOM) { o.TotalBytes = slack }, gpu: withTotal(gpuTotal),
			check: func(f *facts) bool { return f.oom.TotalBytes == slack }},
		{name: "one byte more is no capacity of this GPU",
			oom: func(o *OOM) { o.TotalBytes = slack + 1 }, gpu: withTotal(gpuTotal),
			check:   func(f *facts) bool { return f.oom.TotalBytes == -1 && f.total == gpuTotal },
			dropped: []string{"the message's total of 65.0 GiB"}},
		{name: "the GPU's total judges even when the message's is close",
			oom: func(o *OOM) { o.TotalBytes, o.FreeBytes = gpuTotal+512*mib, slack+mib }, gpu: withTotal(gpuTotal),
			check:   func(f *facts) bool { return f.oom.FreeBytes == -1 },
			dropped: []string{"the message's free of 65.0 GiB above the 64.0 GiB total"}},
		{name: "without a GPU total the message's judges",
			oom: func(o *OOM) { o.TotalBytes, o.FreeBytes = gpuTotal, slack+1 }, gpu: withTotal(0),
			check:   func(f *facts) bool { return f.oom.FreeBytes == -1 && f.total == gpuTotal },
			dropped: []string{"the message's free of 65.0 GiB above the 64.0 GiB total"}},
		{name: "without a GPU the message's judges",
			oom: func(o *OOM) { o.TotalBytes, o.ReservedBytes, o.AllocatedBytes = gpuTotal, slack+1, gib }, gpu: nil,
			check:   func(f *facts) bool { return f.oom.ReservedBytes == -1 && f.oom.AllocatedBytes == gib },
			dropped: []string{"the message's reserved of 65.0 GiB above the 64.0 GiB total"}},
		{name: "a GPU total of 64 TiB is possible",
			oom: func(o *OOM) { o.TotalBytes = -1 }, gpu: withTotal(maxPlausibleBytes),
			check: func(f *facts) bool { return f.total == maxPlausibleBytes }},
		{name: "one byte more is not",
			oom: func(o *OOM) { o.TotalBytes = -1 }, gpu: withTotal(maxPlausibleBytes + 1),
			check:   func(f *facts) bool { return f.gpu.Total == -1 && f.total == -1 },
			dropped: []string{"the GPU's total of 64.0 TiB"}},
		{name: "a message's total of 64 TiB is possible without a GPU",
			oom: func(o *OOM) { o.TotalBytes = maxPlausibleBytes }, gpu: nil,
			check: func(f *facts) bool { return f.total == maxPlausibleBytes }},
		{name: "allocated above a reserved of zero drops both",
			oom: func(o *OOM) { o.AllocatedBytes, o.ReservedBytes = gib, 0 }, gpu: withTotal(gpuTotal),
			check:   func(f *facts) bool { return f.oom.AllocatedBytes == -1 && f.oom.ReservedBytes == -1 },
			dropped: []string{"the message's allocated 1.0 GiB above its reserved 0 B"}},
		{name: "allocated equal to reserved is fine",
			oom: func(o *OOM) { o.AllocatedBytes, o.ReservedBytes = gib, gib }, gpu: withTotal(gpuTotal),
			check: func(f *facts) bool { return f.oom.AllocatedBytes == gib && f.oom.ReservedBytes == gib }},
		{name: "a used sample above the GPU's total",
			oom: func(o *OOM) {}, gpu: func() *GPUState { g := withTotal(gpuTotal); g.Used = slack + 1; return g }(),
			check:   func(f *facts) bool { return f.gpu.Used == -1 },
			dropped: []string{"used of 65.0 GiB above the 64.0 GiB total"}},
		{name: "a process at the bound is kept", oom: func(o *OOM) {}, gpu: withTenant(slack),
			check: func(f *facts) bool { return f.gpu.Processes[1].Bytes == slack }},
		{name: "a process one byte above is dropped", oom: func(o *OOM) {}, gpu: withTenant(slack + 1),
			check:   func(f *facts) bool { return f.gpu.Processes[1].Bytes == -1 && f.gpu.Processes[0].Bytes == 20*gib },
			dropped: []string{"pid 300's 65.0 GiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := pytorchOOM(2*gib, 900*mib, 19*gib, 19*gib+500*mib)
			o.TotalBytes = -1
			tt.oom(&o)
			th := DefaultThresholds()
			f := newFacts(o, tt.gpu, &th)
			if !tt.check(f) {
				t.Errorf("facts: free %d total %d oom %+v", f.free, f.total, f.oom)
			}
			if !slices.Equal(f.dropped, tt.dropped) {
				t.Errorf("dropped %q, want %q", f.dropped, tt.dropped)
			}
		})
	}
}

// TestRetiredPagesBound: up to 1024 retired pages per cause is a page count (16 × NVML's
// 64); more is no counter at all and makes the whole map unknown.
func TestRetiredPagesBound(t *testing.T) {
	th := DefaultThresholds()
	g := gpuWith(0, proc(100, "python", "aaaa", 20*gib))
	g.RetiredPages = map[string]int64{"double_bit_ecc": maxPlausibleRetired}
	if f := newFacts(blankOOM(), g, &th); f.gpu.RetiredPages["double_bit_ecc"] != maxPlausibleRetired || len(f.dropped) != 0 {
		t.Fatalf("1024 pages: %v dropped %q", f.gpu.RetiredPages, f.dropped)
	}
	g.RetiredPages = map[string]int64{"double_bit_ecc": maxPlausibleRetired + 1, "single_bit_ecc": 3}
	if f := newFacts(blankOOM(), g, &th); f.gpu.RetiredPages != nil || !slices.Equal(f.dropped, []string{"1025 retired pages (double_bit_ecc)"}) {
		t.Fatalf("1025 pages: %v dropped %q", f.gpu.RetiredPages, f.dropped)
	}
}

// TestFailingSeriesSanitized: the failing process's own series loses the points above the
// GPU's total + 1/64 (the bound kept), in a copy: the caller's state and the other
// processes are untouched, and the note counts what was left out.
func TestFailingSeriesSanitized(t *testing.T) {
	th := DefaultThresholds()
	limit := float64(h100Total + h100Total/64)
	other := proc(50, "other", "bbbb", gib)
	failing := proc(100, "python", "aaaa", 20*gib)
	failing.Series[10].V, failing.Series[20].V, failing.Series[30].V = limit, limit+1, limit+2
	g := gpuWith(0, failing, other)
	f := newFacts(pytorchOOM(2*gib, 900*mib, 19*gib, 19*gib+500*mib), g, &th)
	if f.failing == nil || f.failing.PID != 100 || len(f.failing.Series) != len(failing.Series)-2 {
		t.Fatalf("failing %+v", f.failing)
	}
	if f.failing != &f.gpu.Processes[0] || len(f.gpu.Processes[1].Series) != len(other.Series) {
		t.Fatal("the failing process is not the copy's first entry, or the other changed")
	}
	if !slices.Contains(f.dropped, "2 samples of pid 100 above the GPU's total") {
		t.Fatalf("dropped %q", f.dropped)
	}
	if len(g.Processes[0].Series) != len(failing.Series) || g.Processes[0].Series[20].V != limit+1 {
		t.Fatal("the caller's state was modified")
	}
	// A GPU without a known total has no bound to judge the series by.
	g = gpuWith(0, failing, other)
	g.Total = 0
	if f := newFacts(pytorchOOM(2*gib, 900*mib, 19*gib, 19*gib+500*mib), g, &th); len(f.failing.Series) != len(failing.Series) {
		t.Fatalf("total unknown: %d of %d points kept", len(f.failing.Series), len(failing.Series))
	}
}

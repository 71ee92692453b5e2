package classify

import "testing"

// TestCapacityLossBounds pins ruleCapacityLoss at each of its bounds: Total below the
// product's usual total by more than spec_shortfall_fraction (here 25% of a 100 GiB
// product, so the bound is exactly 75 GiB), and a loss that explains the shortfall
// (request − free) only when it is at least that shortfall.
func TestCapacityLossBounds(t *testing.T) {
	const product = "Test GPU 100"
	pages16 := map[string]int64{"single_bit_ecc": 10, "double_bit_ecc": 6, "unknown_cause": -3} // 16 × 64 KiB = 1 MiB
	tests := []struct {
		name      string
		total     int64 // the GPU's reported total
		pages     map[string]int64
		req, free int64 // the message's; free -1 makes the GPU's free unknown too
		pending   bool
		remap     bool
		holds     bool
		complete  bool
		explains  int64
		evidence  string
	}{
		{name: "total at the bound is not short", total: 75 * gib, req: 2 * gib, free: gib},
		{name: "one byte below the bound", total: 75*gib - 1, req: 2 * gib, free: gib,
			holds: true, complete: true, explains: 25*gib + 1,
			evidence: "GPU-5a8e1c2d… (Test GPU 100) reports 75.0 GiB total, 25.0 GiB below the usual 100.0 GiB for that product; " +
				"the request of 2.0 GiB needed 1.0 GiB more than the 1.0 GiB free"},
		{name: "a total of zero is no total", total: 0, req: 2 * gib, free: gib},
		{name: "retired pages exactly the shortfall", total: 100 * gib, pages: pages16, req: gib + mib, free: gib,
			holds: true, complete: true, explains: mib,
			evidence: "GPU-5a8e1c2d…: 16 retired pages remove about 1.0 MiB; the request of 1.0 GiB needed 1.0 MiB more than the 1.0 GiB free"},
		{name: "retired pages one byte short of the shortfall", total: 100 * gib, pages: pages16, req: gib + mib + 1, free: gib},
		{name: "the request fit in what was free", total: 100 * gib, pages: pages16, req: gib, free: gib},
		{name: "nothing free is a known free", total: 100 * gib, pages: pages16, req: mib, free: 0,
			holds: true, complete: true, explains: mib,
			evidence: "GPU-5a8e1c2d…: 16 retired pages remove about 1.0 MiB; the request of 1.0 MiB needed 1.0 MiB more than the 0 B free"},
		{name: "retired pages with the shortfall unknown", total: 100 * gib, pages: pages16, req: 2 * gib, free: -1},
		{name: "below spec with the shortfall unknown", total: 70 * gib, req: 2 * gib, free: -1,
			holds: true, complete: false, explains: 30 * gib,
			evidence: "GPU-5a8e1c2d… (Test GPU 100) reports 70.0 GiB total, 30.0 GiB below the usual 100.0 GiB for that product; the request was 2.0 GiB"},
		{name: "a zero request states no shortfall", total: 70 * gib, req: 0, free: gib,
			holds: true, complete: false, explains: 30 * gib,
			evidence: "GPU-5a8e1c2d… (Test GPU 100) reports 70.0 GiB total, 30.0 GiB below the usual 100.0 GiB for that product; " +
				"the request of 0 B failed with 1.0 GiB reported free"},
		{name: "pending retirements", total: 100 * gib, pages: pages16, req: gib + mib, free: gib, pending: true,
			holds: true, complete: true, explains: mib,
			evidence: "GPU-5a8e1c2d…: 16 retired pages remove about 1.0 MiB with more pending a reset; the request of 1.0 GiB needed 1.0 MiB more than the 1.0 GiB free"},
		{name: "a failed row remap holds on its own", total: 100 * gib, req: 2 * gib, free: gib, remap: true,
			holds: true, complete: false, explains: 0,
			evidence: "GPU-5a8e1c2d…: row remapping failed (a memory bank is out of spare rows); the request of 2.0 GiB needed 1.0 GiB more than the 1.0 GiB free"},
		{name: "below spec, pages and a failed remap together", total: 75*gib - 1, pages: pages16, req: 2 * gib, free: gib, remap: true,
			holds: true, complete: true, explains: 25*gib + 1 + mib,
			evidence: "GPU-5a8e1c2d… (Test GPU 100) reports 75.0 GiB total, 25.0 GiB below the usual 100.0 GiB for that product; " +
				"16 retired pages remove about 1.0 MiB; row remapping failed (a memory bank is out of spare rows); " +
				"the request of 2.0 GiB needed 1.0 GiB more than the 1.0 GiB free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			th.SpecTotals = map[string]int64{product: 100 * gib}
			th.SpecShortfallFraction = 0.25
			g := gpuWith(0, proc(100, "python", "aaaa", 60*gib))
			g.Name, g.Total, g.RetiredPages = product, tt.total, tt.pages
			g.RetiredPagesPending, g.RemapFailed = tt.pending, tt.remap
			g.Free = -1 // the message's free decides
			o := pytorchOOM(tt.req, tt.free, -1, -1)
			o.TotalBytes = -1
			v := ruleCapacityLoss(newFacts(o, g, &th))
			if v.holds != tt.holds || v.complete != tt.complete || v.explains != tt.explains || v.evidence != tt.evidence {
				t.Fatalf("got holds=%v complete=%v explains=%d\n  %q\nwant holds=%v complete=%v explains=%d\n  %q",
					v.holds, v.complete, v.explains, v.evidence, tt.holds, tt.complete, tt.explains, tt.evidence)
			}
		})
	}
}

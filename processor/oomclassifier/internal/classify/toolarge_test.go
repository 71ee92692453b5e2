package classify

import (
	"math"
	"testing"
)

// TestWorkloadTooLargeBounds pins ruleWorkloadTooLarge at its bounds (full_fraction and
// dense_fraction 0.75 here, so that the bounds are exact): a request larger than the whole
// GPU; a dense allocator (allocated ≥ dense_fraction × reserved); a footprint at least
// full_fraction × total, or one the request overflows; never when the request fit in what
// was free. It explains only what the workload alone overshoots the GPU by.
func TestWorkloadTooLargeBounds(t *testing.T) {
	const total = h100Total
	tests := []struct {
		name            string
		req, free       int64
		alloc, reserved int64
		procBytes       int64 // the message's process total
		full            float64
		holds, complete bool
		explains        int64
	}{
		// Not "larger than the GPU": it overflows beside the failing process's 40 GiB.
		{name: "a request of exactly the whole GPU is not larger than it", req: total, free: -1, alloc: -1, reserved: -1, procBytes: -1,
			holds: true, complete: false, explains: 40 * gib},
		{name: "a request one byte larger", req: total + 1, free: -1, alloc: -1, reserved: -1, procBytes: -1,
			holds: true, complete: true, explains: math.MaxInt64},
		{name: "dense: allocated exactly the fraction, the request overflows", req: 16 * gib, free: 900 * mib, alloc: 48 * gib, reserved: 64 * gib, procBytes: -1,
			holds: true, complete: true, explains: 80*gib - total},
		{name: "dense: one byte below the fraction", req: 16 * gib, free: 900 * mib, alloc: 48*gib - 1, reserved: 64 * gib, procBytes: -1},
		{name: "an allocator holding nothing leaves the process total to decide", req: gib, free: 900 * mib, alloc: 0, reserved: 0, procBytes: 70 * gib,
			holds: true, complete: false, explains: 0},
		{name: "nothing allocated of much reserved is not dense", req: gib, free: 900 * mib, alloc: 0, reserved: 70 * gib, procBytes: 72 * gib},
		{name: "full: exactly full_fraction of the GPU", req: gib, free: 900 * mib, alloc: -1, reserved: -1, procBytes: total / 4 * 3,
			holds: true, complete: false, explains: 0},
		{name: "full: one byte below", req: gib, free: 900 * mib, alloc: -1, reserved: -1, procBytes: total/4*3 - 1},
		{name: "overflow: footprint and request exactly fill the GPU", req: 2 * gib, free: 900 * mib, alloc: -1, reserved: -1, procBytes: total - 2*gib, full: 0.99},
		{name: "overflow: one byte more", req: 2*gib + 1, free: 900 * mib, alloc: -1, reserved: -1, procBytes: total - 2*gib, full: 0.99,
			holds: true, complete: false, explains: 1},
		{name: "the request exactly fit in what was free", req: gib, free: gib, alloc: -1, reserved: -1, procBytes: 70 * gib},
		{name: "the request one byte more than free", req: gib, free: gib - 1, alloc: -1, reserved: -1, procBytes: 70 * gib,
			holds: true, complete: false, explains: 0},
		{name: "no request size: full decides, not completely", req: 0, free: 900 * mib, alloc: 70 * gib, reserved: 72 * gib, procBytes: -1,
			holds: true, complete: false, explains: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			th.FullFraction, th.DenseFraction = 0.75, 0.75
			if tt.full != 0 {
				th.FullFraction = tt.full
			}
			g := gpuWith(0, proc(100, "python", "aaaa", 40*gib))
			g.Free = -1 // the message's free decides
			o := pytorchOOM(tt.req, tt.free, tt.alloc, tt.reserved)
			o.ProcessBytes = tt.procBytes
			v := ruleWorkloadTooLarge(newFacts(o, g, &th))
			if v.holds != tt.holds || v.complete != tt.complete || v.explains != tt.explains {
				t.Fatalf("holds=%v complete=%v explains=%d, want %v %v %d: %s",
					v.holds, v.complete, v.explains, tt.holds, tt.complete, tt.explains, v.evidence)
			}
		})
	}
}

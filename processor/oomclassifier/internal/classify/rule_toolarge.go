package classify

import (
	"fmt"
	"math"
)

// ruleWorkloadTooLarge holds when the failing workload on its own does not fit: a single
// request larger than the whole GPU (decidable from the message alone), or a footprint that
// is dense (allocated ≥ DenseFraction × reserved: not fragmentation), not ramping (not a
// leak) and either near capacity (≥ FullFraction × total) or too big with the request added.
func ruleWorkloadTooLarge(f *facts) verdict {
	req := f.oom.RequestedBytes
	if f.total <= 0 {
		return verdict{}
	}
	if req > f.total {
		ev := fmt.Sprintf("The single request of %s is larger than the GPU's whole %s", humanBytes(req), humanBytes(f.total))
		// It could never fit, whatever else held memory: it explains everything.
		return verdict{holds: true, evidence: ev, complete: true, fromMessage: true, explains: math.MaxInt64}
	}
	if leakRamp(f) {
		return verdict{}
	}
	var footprint int64
	var what string
	fromAllocator := f.oom.ReservedBytes > 0 && f.oom.AllocatedBytes >= 0
	switch {
	case fromAllocator:
		if float64(f.oom.AllocatedBytes) < f.th.DenseFraction*float64(f.oom.ReservedBytes) {
			return verdict{}
		}
		footprint = f.oom.ReservedBytes
		what = fmt.Sprintf("the allocator held %s reserved with %s allocated", humanBytes(footprint), humanBytes(f.oom.AllocatedBytes))
	case f.oom.ProcessBytes > 0:
		footprint = f.oom.ProcessBytes
		what = "the failing process held " + humanBytes(footprint)
	case f.failing != nil && f.failing.Bytes > 0:
		footprint = f.failing.Bytes
		what = describeProcess(f.failing) + " held " + humanBytes(footprint)
	default:
		return verdict{}
	}
	full := float64(footprint) >= f.th.FullFraction*float64(f.total)
	overflow := req > 0 && footprint+req > f.total
	if !full && !overflow {
		return verdict{}
	}
	if req > 0 && f.free >= 0 && req <= f.free {
		return verdict{} // the request fit in what was free: something else failed it
	}
	// No claim about a ramp here: a ramp too short for the leak rule can still precede this.
	ev := fmt.Sprintf("The workload alone fills the GPU: %s (%s of the %s GPU)", what, percent(footprint, f.total), humanBytes(f.total))
	// It explains only what the workload alone overshoots the GPU by: a near-full workload
	// that would have fit by itself yields to what else held the memory.
	var over int64
	if req > 0 {
		over = max(footprint+req-f.total, 0)
	}
	return verdict{holds: true, evidence: ev + shortfallClause(f), complete: fromAllocator && req > 0,
		fromMessage: fromAllocator && f.gpu == nil, explains: over}
}

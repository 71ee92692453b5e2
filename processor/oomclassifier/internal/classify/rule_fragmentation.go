package classify

import (
	"fmt"
	"math"
)

// ruleFragmentation holds when the framework's allocator had reserved much more than its
// live tensors use: reserved − allocated ≥ max(requested, FragMinFraction × reserved,
// FragMinBytes). The allocator held enough free memory for the request but not in one
// piece. It needs the allocator numbers only the message gives (PyTorch prints them).
func ruleFragmentation(f *facts) verdict {
	res, alloc := f.oom.ReservedBytes, f.oom.AllocatedBytes
	if res < 0 || alloc < 0 || res <= alloc {
		return verdict{}
	}
	gap := res - alloc
	limit := math.Max(f.th.FragMinFraction*float64(res), float64(f.th.FragMinBytes))
	req := f.oom.RequestedBytes
	if req > 0 {
		limit = math.Max(limit, float64(req))
	}
	if float64(gap) < limit {
		return verdict{}
	}
	ev := fmt.Sprintf("The allocator held %s reserved but only %s allocated: %s (%s of reserved) was free inside it yet not in one piece",
		humanBytes(res), humanBytes(alloc), humanBytes(gap), percent(gap, res))
	if req > 0 {
		ev += fmt.Sprintf(" for the %s request", humanBytes(req))
	}
	return verdict{holds: true, evidence: ev, complete: req > 0, fromMessage: true, explains: gap}
}

package classify

import (
	"fmt"
	"strings"
)

// ruleCapacityLoss holds when the GPU has less memory than it should and the loss explains
// the shortfall (request − free): retired pages × RetiredPageBytes plus how far Total is
// below the product's usual NVML total (SpecTotals, beyond SpecShortfallFraction). A failed
// row remap holds on its own: the bank is out of spare rows and the card needs service.
//
// Remapped rows count for nothing: row remapping swaps in spare rows and leaves no hole in
// the address space (NVIDIA's A100 memory error management notes), so it removes no
// capacity. Retirement on pre-Ampere GPUs is capped at 64 pages, so retired pages alone
// rarely explain more than a few MiB; Total below spec is the usual real signal (an ECC mode
// change on GDDR boards, a driver reserving more, a degraded HBM stack).
func ruleCapacityLoss(f *facts) verdict {
	g := f.gpu
	if g == nil {
		return verdict{}
	}
	var pages int64
	for _, n := range g.RetiredPages {
		if n > 0 {
			pages += n
		}
	}
	retired := pages * max(f.th.RetiredPageBytes, 0)
	var specShort int64
	spec := f.th.SpecTotals[g.Name]
	if spec > 0 && g.Total > 0 && float64(g.Total) < float64(spec)*(1-f.th.SpecShortfallFraction) {
		specShort = spec - g.Total
	}
	lost := retired + specShort
	if lost <= 0 && !g.RemapFailed {
		return verdict{}
	}
	req := f.oom.RequestedBytes
	shortfallKnown := req > 0 && f.free >= 0
	explains := specShort > 0 // clearly below spec counts when the shortfall is unknown
	if shortfallKnown {
		explains = req > f.free && lost >= req-f.free
	}
	if !explains && !g.RemapFailed {
		return verdict{}
	}
	var parts []string
	if specShort > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s) reports %s total, %s below the usual %s for that product",
			gpuName(g), g.Name, humanBytes(g.Total), humanBytes(specShort), humanBytes(spec)))
	}
	if pages > 0 {
		p := fmt.Sprintf("%d retired pages remove about %s", pages, humanBytes(retired))
		if g.RetiredPagesPending {
			p += " with more pending a reset"
		}
		parts = append(parts, p)
	}
	if g.RemapFailed {
		parts = append(parts, "row remapping failed (a memory bank is out of spare rows)")
	}
	ev := strings.Join(parts, "; ")
	if specShort == 0 {
		ev = gpuName(g) + ": " + ev
	}
	return verdict{holds: true, evidence: ev + shortfallClause(f), complete: shortfallKnown && explains, explains: lost}
}

package classify

// confidence grades the deciding verdict: high with complete evidence from a well-matched,
// fresh GPU sample (or from the message alone when the GPU was matched at all); medium when
// something was missing, stale or matched only by the node ordinal; low without a GPU, even
// when the message alone decided it: no rule that needs the GPU's metrics (a fault, another
// tenant, a zombie context, a leak) could be checked, and any of them would have taken
// precedence. The match's own limit (GPUState.MatchConfidence) caps the grade, but a verdict
// from the message alone keeps medium: its cause holds whichever GPU it was.
func confidence(f *facts, v verdict) string {
	if f.gpu == nil {
		return ConfidenceLow
	}
	c := gpuConfidence(f, v)
	if limit := f.gpu.MatchConfidence; limit != "" && rank(limit) < rank(c) {
		c = limit
		if v.fromMessage && v.complete && c == ConfidenceLow {
			c = ConfidenceMedium
		}
	}
	return c
}

func gpuConfidence(f *facts, v verdict) string {
	if !v.complete {
		return ConfidenceMedium
	}
	if v.fromMessage {
		return ConfidenceHigh
	}
	if !wellMatched(f.gpu.MatchedBy) {
		return ConfidenceMedium
	}
	if f.gpu.SampleAge > f.th.MaxSampleAge || f.gpu.SampleAge < 0 {
		return ConfidenceMedium
	}
	return ConfidenceHigh
}

// wellMatched: every match but the node ordinal ties the OOM to the GPU by what the GPU's
// own metrics say (its processes, allocations, or being the only one).
func wellMatched(by string) bool {
	switch by {
	case MatchedByPID, MatchedByVPID, MatchedByPod, MatchedByContainer, MatchedByPodOrdinal, MatchedByOnlyGPU:
		return true
	}
	return false
}

func rank(c string) int {
	switch c {
	case ConfidenceHigh:
		return 2
	case ConfidenceMedium:
		return 1
	}
	return 0
}

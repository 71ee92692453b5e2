package classify

import (
	"fmt"
	"strings"
	"time"
)

// ruleGPUFault holds when the GPU reported a fault Xid (application or hardware, per the
// catalog) from XidBefore before the OOM to XidAfter after it: the allocation failed
// because the GPU or context was broken, not because memory ran out.
func ruleGPUFault(f *facts) verdict {
	if f.gpu == nil {
		return verdict{}
	}
	var nearest *XidEvent
	var nearestDist time.Duration
	n := 0
	for i := range f.gpu.Xids {
		x := &f.gpu.Xids[i]
		if !x.Fault {
			continue
		}
		d := x.T.Sub(f.oom.Time)
		// Without an OOM time the window is all we know: its Xids are near enough.
		if !f.oom.Time.IsZero() && (d < -f.th.XidBefore || d > f.th.XidAfter) {
			continue
		}
		n++
		if nearest == nil || absDuration(d) < nearestDist {
			nearest, nearestDist = x, absDuration(d)
		}
	}
	if nearest == nil {
		return verdict{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s reported Xid %d", gpuName(f.gpu), nearest.Code)
	if nearest.Description != "" {
		fmt.Fprintf(&b, " (%s)", nearest.Description)
	}
	if !f.oom.Time.IsZero() && !nearest.T.IsZero() {
		d := nearest.T.Sub(f.oom.Time)
		if d <= 0 {
			fmt.Fprintf(&b, " %s before the OOM", humanDuration(-d))
		} else {
			fmt.Fprintf(&b, " %s after the OOM", humanDuration(d))
		}
	}
	if n > 1 {
		fmt.Fprintf(&b, ", one of %d fault Xids near it", n)
	}
	b.WriteString(": the failure is a GPU or application fault, not a capacity problem")
	return verdict{holds: true, evidence: b.String(), complete: !f.oom.Time.IsZero()}
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		if d == minDuration {
			return maxDuration
		}
		return -d
	}
	return d
}

const (
	maxDuration = time.Duration(1<<63 - 1)
	minDuration = -maxDuration - 1
)

package classify

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// ruleMemoryLeak holds when memory ramped steadily up to the OOM: the fit after the last
// step lasts at least LeakMinDuration, grows at least LeakMinSlope and LeakMinGrowthFraction
// of the GPU, with R² ≥ LeakMinR2 and growth in every span. The failing process's own
// series decides it completely; the GPU's usage mixes in other processes, so with more
// than one process it is partial evidence.
func ruleMemoryLeak(f *facts) verdict {
	if !leakRamp(f) {
		return predictedLeak(f) // the receiver's forecast is evidence on its own
	}
	l := &f.leak
	var b strings.Builder
	if l.onProcess {
		fmt.Fprintf(&b, "GPU memory of %s", describeProcess(f.failing))
	} else {
		fmt.Fprintf(&b, "GPU memory on %s", gpuName(f.gpu))
	}
	fmt.Fprintf(&b, " grew %s/s over %s (R²=%.2f), from %s to %s",
		humanBytesF(l.slope), humanDuration(l.dur), l.r2, humanBytesF(l.startValue), humanBytesF(l.endValue))
	if r, ok := runway(f); ok {
		fmt.Fprintf(&b, "; at that rate the GPU's %s would have filled in ~%s from the start of the ramp",
			humanBytes(f.total), humanRunway(r))
	}
	b.WriteString(predictionNote(f))
	complete := l.onProcess || len(f.gpu.Processes) <= 1
	grown := l.slope * l.dur.Seconds()
	if !(grown > 0) || grown > float64(maxPlausibleBytes) {
		grown = 0
	}
	return verdict{holds: true, evidence: b.String(), complete: complete, explains: int64(grown)}
}

// leakRamp reports whether the fit shows a leak by the thresholds. workload_too_large
// uses it too: a workload that was still growing did not simply "not fit".
func leakRamp(f *facts) bool {
	return f.leak.ramp // ramp.Criteria.Holds on the leak thresholds: the one copy of the test
}

// runway is how long the ramp needed, from its start, to fill the GPU: (total − GPU used
// at the start) / slope. Used at the start is read from the GPU's usage when the fit was on
// the process's own series.
func runway(f *facts) (time.Duration, bool) {
	l := &f.leak
	if f.total <= 0 || !(l.slope > 0) {
		return 0, false
	}
	used := l.startValue
	if l.onProcess {
		if v, ok := valueAt(f.gpu.Usage, l.start); ok {
			used = v
		}
	}
	secs := (float64(f.total) - used) / l.slope
	if !(secs > 0) || secs > float64(maxDuration/time.Second) {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

// valueAt is the series' latest value at or before at (Unix nanoseconds).
func valueAt(s []Point, at int64) (float64, bool) {
	v, ok := 0.0, false
	for i := range s {
		if s[i].T > at {
			break
		}
		v, ok = s[i].V, true
	}
	return v, ok && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// humanRunway writes a runway in minutes ("7 min"), seconds below one minute, hours above
// two hours.
func humanRunway(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d < 2*time.Hour:
		return fmt.Sprintf("%.0f min", d.Minutes())
	default:
		return fmt.Sprintf("%.1f h", d.Hours())
	}
}

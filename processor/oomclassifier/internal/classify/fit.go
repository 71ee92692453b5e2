package classify

import (
	"math"
	"time"
)

// leakFit is the least-squares line through the part of a memory series after its last
// step (a model load, a restart, a big free), up to the OOM.
type leakFit struct {
	ok         bool    // a line could be fitted
	onProcess  bool    // fitted on the failing process's series rather than the GPU's usage
	slope      float64 // bytes per second
	r2         float64 // fit quality, 0..1
	steady     bool    // every span of the segment grew by at least a quarter of its share
	start      int64   // Unix nanoseconds of the segment's first point
	dur        time.Duration
	points     int
	startValue float64 // the series' value at the segment start
	endValue   float64 // the series' last value
	segment    []Point // the fitted part of the series (a view of the caller's slice)
}

// fitLeak fits the failing process's series when it has one, else the GPU's usage.
func fitLeak(f *facts) leakFit {
	if f.gpu == nil {
		return leakFit{}
	}
	series, onProcess := f.gpu.Usage, false
	if f.failing != nil && len(f.failing.Series) >= f.th.LeakMinPoints {
		series, onProcess = f.failing.Series, true
	}
	step := float64(f.th.LeakStepMinBytes)
	if f.total > 0 {
		step = math.Max(step, f.th.LeakStepFraction*float64(f.total))
	}
	fit := fitAfterLastStep(series, f.oom.Time, step, f.th.LeakStepMaxGap)
	fit.onProcess = onProcess
	if fit.ok {
		fit.steady = steadySegments(fit.segment, fit.slope, fit.dur, f.th.LeakSteadySegments)
	}
	return fit
}

// fitAfterLastStep cuts the series at the OOM time and after its last step (a change of
// at least step between samples at most maxGap apart), and fits a line to what is left.
// A series that goes back in time or holds a non-finite value is not fitted.
func fitAfterLastStep(s []Point, at time.Time, step float64, maxGap time.Duration) leakFit {
	end := len(s)
	if !at.IsZero() {
		atNs := at.UnixNano()
		for end > 0 && s[end-1].T > atNs {
			end--
		}
	}
	if end < 3 {
		return leakFit{}
	}
	begin := 0
	prev := int64(0)
	for i := 0; i < end; i++ {
		if math.IsNaN(s[i].V) || math.IsInf(s[i].V, 0) {
			return leakFit{}
		}
		ns := s[i].T
		if i > 0 {
			dt := time.Duration(ns - prev)
			if dt < 0 {
				return leakFit{}
			}
			if dt <= maxGap && math.Abs(s[i].V-s[i-1].V) >= step {
				begin = i
			}
		}
		prev = ns
	}
	return fitLine(s[begin:end])
}

// fitLine is ordinary least squares of V on seconds since the first point, with R². It
// computes centred sums in a second pass: memory values are ~1e11 and their squares would
// lose the ramp to rounding otherwise.
func fitLine(s []Point) leakFit {
	n := len(s)
	if n < 3 {
		return leakFit{}
	}
	t0 := s[0].T
	var mx, my float64
	for i := range s {
		mx += seconds(s[i].T, t0)
		my += s[i].V
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy, syy float64
	for i := range s {
		dx := seconds(s[i].T, t0) - mx
		dy := s[i].V - my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if !(sxx > 0) || math.IsInf(syy, 0) || math.IsInf(sxy, 0) {
		return leakFit{}
	}
	fit := leakFit{
		ok:         true,
		slope:      sxy / sxx,
		start:      s[0].T,
		dur:        time.Duration(s[n-1].T - t0),
		points:     n,
		startValue: s[0].V,
		endValue:   s[n-1].V,
		segment:    s,
	}
	if syy > 0 {
		fit.r2 = sxy * sxy / (sxx * syy)
	}
	return fit
}

// maxSegments bounds LeakSteadySegments so the per-segment sums stay on the stack.
const maxSegments = 32

// steadySegments splits the segment into k equal spans of time and requires each span's
// mean to exceed the previous one's by at least a quarter of what the fitted slope
// predicts. A load followed by a plateau fits a line passably but fails here: its growth
// sits in the first spans, and a ramp that stopped minutes before the OOM fails in the
// last ones.
func steadySegments(s []Point, slope float64, dur time.Duration, k int) bool {
	if dur <= 0 || !(slope > 0) {
		return false
	}
	k = min(max(k, 2), maxSegments)
	var sum [maxSegments]float64
	var cnt [maxSegments]int
	t0 := s[0].T
	for i := range s {
		q := int(float64(k) * float64(s[i].T-t0) / float64(dur))
		q = min(max(q, 0), k-1)
		sum[q] += s[i].V
		cnt[q]++
	}
	want := 0.25 * slope * dur.Seconds() / float64(k)
	prev := 0.0
	for q := range k {
		if cnt[q] == 0 {
			return false // a gap as long as a span: not a measured ramp
		}
		m := sum[q] / float64(cnt[q])
		if q > 0 && m-prev < want {
			return false
		}
		prev = m
	}
	return true
}

// seconds is t − t0 (both Unix nanoseconds) in seconds. A difference that overflows int64
// (points centuries apart) wraps, which can only make the fit fail, never panic.
func seconds(t, t0 int64) float64 { return float64(t-t0) / 1e9 }

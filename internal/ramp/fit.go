package ramp

import (
	"math"
	"time"
)

// Point is one sample of a time series. T is Unix nanoseconds rather than a time.Time: a
// window holds thousands of points, and time.Time's location pointer makes every copy of them
// pay write barriers and every collection scan them.
type Point struct {
	T int64 // Unix nanoseconds
	V float64
}

// Fit is the least-squares line through the part of a series after its last step.
type Fit struct {
	OK         bool    // a line could be fitted
	Slope      float64 // units (bytes) per second
	R2         float64 // fit quality, 0..1
	Start      int64   // Unix nanoseconds of the segment's first point
	Dur        time.Duration
	Points     int
	StartValue float64 // the series' value at the segment start
	EndValue   float64 // the series' last value
	Segment    []Point // the fitted part of the series (a view of the caller's slice)
}

// AfterLastStep cuts the series at time at (zero: keeps it all) and after its last step (a
// change of at least step between samples at most maxGap apart), and fits a line to what is
// left. A series that goes back in time or holds a non-finite value is not fitted.
func AfterLastStep(s []Point, at time.Time, step float64, maxGap time.Duration) Fit {
	end := len(s)
	if !at.IsZero() {
		atNs := at.UnixNano()
		for end > 0 && s[end-1].T > atNs {
			end--
		}
	}
	if end < 3 {
		return Fit{}
	}
	begin := 0
	prev := int64(0)
	for i := 0; i < end; i++ {
		if math.IsNaN(s[i].V) || math.IsInf(s[i].V, 0) {
			return Fit{}
		}
		ns := s[i].T
		if i > 0 {
			dt := time.Duration(ns - prev)
			if dt < 0 {
				return Fit{}
			}
			if dt <= maxGap && math.Abs(s[i].V-s[i-1].V) >= step {
				begin = i
			}
		}
		prev = ns
	}
	return Line(s[begin:end])
}

// Line is ordinary least squares of V on seconds since the first point, with R². It
// computes centred sums in a second pass: memory values are ~1e11 and their squares would
// lose the ramp to rounding otherwise.
func Line(s []Point) Fit {
	n := len(s)
	if n < 3 {
		return Fit{}
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
		return Fit{}
	}
	fit := Fit{
		OK:         true,
		Slope:      sxy / sxx,
		Start:      s[0].T,
		Dur:        time.Duration(s[n-1].T - t0),
		Points:     n,
		StartValue: s[0].V,
		EndValue:   s[n-1].V,
		Segment:    s,
	}
	if syy > 0 {
		fit.R2 = sxy * sxy / (sxx * syy)
	}
	return fit
}

// MaxSegments bounds the steadiness spans so the per-span sums stay on the stack.
const MaxSegments = 32

// Steady splits the fitted segment into k equal spans of time and requires each span's mean
// to exceed the previous one's by at least a quarter of what the fitted slope predicts. A
// load followed by a plateau fits a line passably but fails here: its growth sits in the
// first spans, and a ramp that stopped minutes ago fails in the last ones.
func (f Fit) Steady(k int) bool {
	s, dur, slope := f.Segment, f.Dur, f.Slope
	if !f.OK || dur <= 0 || !(slope > 0) || len(s) == 0 {
		return false
	}
	k = min(max(k, 2), MaxSegments)
	var sum [MaxSegments]float64
	var cnt [MaxSegments]int
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

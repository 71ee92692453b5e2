package classify

import (
	"time"

	"github.com/gpumem/otelcol-gpumem/internal/ramp"
)

// leakFit is the steady-ramp fit (package ramp, shared with the gpu_mem receiver's runway)
// of the failing process's series, else the GPU's usage, up to the OOM.
type leakFit struct {
	ok         bool    // a line could be fitted
	onProcess  bool    // fitted on the failing process's series rather than the GPU's usage
	ramp       bool    // the fit is a steady ramp by the leak thresholds (ramp.Criteria.Holds)
	slope      float64 // bytes per second
	r2         float64 // fit quality, 0..1
	steady     bool    // every span of the segment grew by at least a quarter of its share
	start      int64   // Unix nanoseconds of the segment's first point
	dur        time.Duration
	points     int
	startValue float64 // the series' value at the segment start
	endValue   float64 // the series' last value
}

// rampCriteria are the leak thresholds in the shared fit's terms.
func (t *Thresholds) rampCriteria() ramp.Criteria {
	return ramp.Criteria{
		MinDuration: t.LeakMinDuration, MinPoints: t.LeakMinPoints, MinSlope: t.LeakMinSlope,
		MinGrowthFraction: t.LeakMinGrowthFraction, MinR2: t.LeakMinR2, SteadySegments: t.LeakSteadySegments,
		StepMinBytes: float64(t.LeakStepMinBytes), StepFraction: t.LeakStepFraction, StepMaxGap: t.LeakStepMaxGap,
	}
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
	c := f.th.rampCriteria()
	r, holds := c.Ramp(series, f.oom.Time, float64(f.total))
	return leakFit{
		ok: r.OK, onProcess: onProcess, ramp: holds, slope: r.Slope, r2: r.R2,
		steady: r.Steady(c.SteadySegments), start: r.Start, dur: r.Dur, points: r.Points,
		startValue: r.StartValue, endValue: r.EndValue,
	}
}

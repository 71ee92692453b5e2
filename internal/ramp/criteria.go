package ramp

import (
	"math"
	"time"
)

// Criteria decide when a fit is a steady ramp. The oom_classifier's leak_* thresholds and
// the gpu_mem receiver's runway settings both fill one.
type Criteria struct {
	MinDuration       time.Duration // the fitted segment lasts at least this long
	MinPoints         int           // with at least this many samples
	MinSlope          float64       // bytes per second
	MinGrowthFraction float64       // slope × duration ≥ this × total, where total is known
	MinR2             float64
	SteadySegments    int // spans that must each grow (2..MaxSegments)
	// A step is a change of at least max(StepMinBytes, StepFraction × total) between
	// samples at most StepMaxGap apart.
	StepMinBytes float64
	StepFraction float64
	StepMaxGap   time.Duration
}

const (
	mib = 1 << 20
	gib = 1 << 30
)

// DefaultCriteria are the classifier's default leak thresholds (its documentation gives the
// reasons); the receiver's runway shares them except where its config says otherwise.
func DefaultCriteria() Criteria {
	return Criteria{
		MinDuration: 2 * time.Minute,
		MinPoints:   20,
		// 1 MiB/s fills an 80 GiB GPU in a day: slower growth is not what makes an OOM.
		MinSlope:          mib,
		MinGrowthFraction: 0.02,
		MinR2:             0.9,
		SteadySegments:    8,
		// Loading a model moves GiBs in seconds; a leak moves MiBs per second.
		StepMinBytes: gib,
		StepFraction: 0.05,
		StepMaxGap:   10 * time.Second,
	}
}

// Step is the smallest change between neighbouring samples that counts as a step on a
// device of total bytes (0 or less: unknown).
func (c *Criteria) Step(total float64) float64 {
	if total > 0 {
		return math.Max(c.StepMinBytes, c.StepFraction*total)
	}
	return c.StepMinBytes
}

// Ramp fits s after its last step (cut at at; zero keeps all) and reports whether the fit is
// a steady ramp by c on a device of total bytes.
func (c *Criteria) Ramp(s []Point, at time.Time, total float64) (Fit, bool) {
	fit := AfterLastStep(s, at, c.Step(total), c.StepMaxGap)
	return fit, c.Holds(fit, total)
}

// Holds reports whether fit is a steady ramp by c: long enough, enough points, fast enough,
// a good line, growth in every span, and a large enough share of total.
func (c *Criteria) Holds(fit Fit, total float64) bool {
	if !fit.OK || fit.Points < c.MinPoints || fit.Dur < c.MinDuration {
		return false
	}
	if fit.Slope < c.MinSlope || fit.R2 < c.MinR2 {
		return false
	}
	if total > 0 && fit.Slope*fit.Dur.Seconds() < c.MinGrowthFraction*total {
		return false
	}
	return fit.Steady(c.SteadySegments)
}

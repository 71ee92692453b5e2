package classify

import (
	"fmt"
	"strings"
	"time"
)

// predictionSlack is how much later than its runway an OOM may come and still be the one a
// prediction forecast: growth slows and speeds up, and the last allocation need not be the
// one that fills the GPU exactly.
const predictionSlack = time.Minute

// forecast is the latest prediction on the matched GPU that foresaw this OOM: made before it,
// with the OOM within twice its runway plus predictionSlack, and about the failing process
// when both name one.
func forecast(f *facts) (*Prediction, bool) {
	if f.gpu == nil {
		return nil, false
	}
	failing := f.oom.PID
	if f.failing != nil {
		failing = f.failing.PID
	}
	for i := len(f.gpu.Predictions) - 1; i >= 0; i-- {
		p := &f.gpu.Predictions[i]
		if !f.oom.Time.IsZero() && (p.T.After(f.oom.Time) || f.oom.Time.Sub(p.T) > 2*p.Runway+predictionSlack) {
			continue
		}
		if failing > 0 && p.PID > 0 && p.PID != failing {
			continue // another process was the one growing
		}
		return p, true
	}
	return nil, false
}

// predictedLeak holds memory_leak on the receiver's forecast alone, when the window's own fit
// did not (too little history here, stricter leak_* thresholds, a logs-first gateway). It is
// complete when the forecast named the failing process.
func predictedLeak(f *facts) verdict {
	p, ok := forecast(f)
	if !ok {
		return verdict{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The gpu_mem receiver predicted this OOM on %s", gpuName(f.gpu))
	writePrediction(&b, f, p)
	named := p.PID > 0 && (f.failing != nil && f.failing.PID == p.PID || f.oom.PID == p.PID)
	if p.Rate > 0 {
		f.leak.slope = p.Rate // the recommendation quotes the rate; the fit did not find one
	}
	return verdict{holds: true, evidence: b.String(), complete: named}
}

// predictionNote adds the forecast to the evidence of a leak the fit found; "" without one.
func predictionNote(f *facts) string {
	p, ok := forecast(f)
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString("; the gpu_mem receiver predicted it")
	writePrediction(&b, f, p)
	return b.String()
}

func writePrediction(b *strings.Builder, f *facts, p *Prediction) {
	if !f.oom.Time.IsZero() && !p.T.After(f.oom.Time) {
		fmt.Fprintf(b, " %s before it", humanDuration(f.oom.Time.Sub(p.T)))
	}
	fmt.Fprintf(b, ": memory growing steadily")
	if p.Rate > 0 {
		fmt.Fprintf(b, " at %s/s", humanBytesF(p.Rate))
	}
	fmt.Fprintf(b, ", full in ~%s", humanRunway(p.Runway))
	if p.PID > 0 {
		fmt.Fprintf(b, ", fastest-growing process pid %d", p.PID)
		if p.Name != "" {
			fmt.Fprintf(b, " (%s)", p.Name)
		}
		if p.ProcessRate > 0 {
			fmt.Fprintf(b, " at %s/s", humanBytesF(p.ProcessRate))
		}
	}
}

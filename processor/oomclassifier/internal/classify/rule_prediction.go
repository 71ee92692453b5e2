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
// when both name one (see forecastFor). Found once per Classify (newFacts).
func forecast(f *facts) (*Prediction, bool) {
	return f.forecast, f.forecast != nil
}

// findForecast finds forecast's prediction; when a prediction named the failing pid but was
// about another process that held it, it returns nil and why, for the evidence.
func findForecast(f *facts) (*Prediction, string) {
	if f.gpu == nil {
		return nil, ""
	}
	failing := f.oom.PID
	if f.failing != nil {
		failing = f.failing.PID
	}
	rejected := ""
	for i := len(f.gpu.Predictions) - 1; i >= 0; i-- {
		p := &f.gpu.Predictions[i]
		if !f.oom.Time.IsZero() && (p.T.After(f.oom.Time) || f.oom.Time.Sub(p.T) > 2*p.Runway+predictionSlack) {
			continue
		}
		if failing > 0 && p.PID > 0 && p.PID != failing {
			continue // another process was the one growing
		}
		if why := anotherHolder(f, p); why != "" {
			if rejected == "" {
				rejected = why
			}
			continue
		}
		return p, ""
	}
	return nil, rejected
}

// presenceSlack: a process counts as listed in a collection of its GPU when it has a point
// this close to the collection's memory-usage point (the metric window's own rule for which
// processes were alive at a moment).
const presenceSlack = 500 * time.Millisecond

// anotherHolder says why a forecast naming the failing process's pid was about another
// process that held the pid, "" when nothing says so. A forecast belongs to one process: its
// pid, its container and pod when both the forecast and the window name them, and its
// unbroken presence on the GPU from the forecast to the OOM. A process the GPU reported
// without after the forecast had exited (or had not started), and a pid is reused: the
// forecast expired with it and never transfers to the next holder.
func anotherHolder(f *facts, p *Prediction) string {
	q := f.failing
	if p.PID <= 0 || q == nil || q.PID != p.PID {
		return ""
	}
	switch {
	case p.ContainerID != "" && q.ContainerID != "" && p.ContainerID != q.ContainerID:
		return fmt.Sprintf("pid %d now runs in container %s, not in container %s the forecast named: that process had exited and the pid was reused",
			q.PID, shortID(q.ContainerID), shortID(p.ContainerID))
	case p.PodUID != "" && q.PodUID != "" && p.PodUID != q.PodUID:
		return fmt.Sprintf("pid %d now runs in pod %s, not in pod %s the forecast named: that process had exited and the pid was reused",
			q.PID, shortID(q.PodUID), shortID(p.PodUID))
	}
	if at, gone := absentSince(q.Series, f.gpu.Usage, p.T.UnixNano()); gone {
		return fmt.Sprintf("%s reported without pid %d %s after the forecast, so the process it named had exited and the pid was reused",
			gpuName(f.gpu), q.PID, humanDuration(time.Duration(at-p.T.UnixNano())))
	}
	return ""
}

// absentSince returns the first collection at or after since (a point of usage, the GPU's
// memory series) in which series, a process's, has no point within presenceSlack. Without
// either series nothing can be told.
func absentSince(series, usage []Point, since int64) (int64, bool) {
	if len(series) == 0 {
		return 0, false
	}
	slack := int64(presenceSlack)
	j := 0
	for _, u := range usage {
		if u.T < since {
			continue
		}
		for j < len(series) && series[j].T < u.T-slack {
			j++
		}
		if j == len(series) || series[j].T > u.T+slack {
			return u.T, true
		}
	}
	return 0, false
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

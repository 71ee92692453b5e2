package classify

import (
	"strings"
	"testing"
	"time"
)

// TestLeakFitsTheProcessFromMinPoints: the failing process's own series is fitted once it
// has leak_min_points samples; with one fewer the GPU's usage is.
func TestLeakFitsTheProcessFromMinPoints(t *testing.T) {
	th := DefaultThresholds()
	for _, tt := range []struct {
		points    int
		onProcess bool
	}{{th.LeakMinPoints, true}, {th.LeakMinPoints - 1, false}, {th.LeakMinPoints + 1, true}} {
		p := proc(100, "python", "aaaa", 40*gib)
		p.Series = p.Series[len(p.Series)-tt.points:]
		f := newFacts(pytorchOOM(2*gib, gib, 39*gib, 39*gib), gpuWith(0, p), &th)
		if f.leak.onProcess != tt.onProcess {
			t.Errorf("%d points: onProcess=%v, want %v", tt.points, f.leak.onProcess, tt.onProcess)
		}
	}
}

// TestLeakOnUsageWithOneProcess: the GPU's usage fitted with a single process on the GPU is
// complete evidence (nothing else can have grown); with two it is partial.
func TestLeakOnUsageWithOneProcess(t *testing.T) {
	o := pytorchOOM(2*gib, gib, -1, -1)
	o.PID = -1 // the failing process is not identified: the usage is fitted
	g := leakGPU(func(s float64) float64 { return float64(30*gib) + s*float64(40*mib) })
	r := Classify(o, g, DefaultThresholds())
	if r.Cause != CauseMemoryLeak || r.Confidence != ConfidenceHigh || !strings.Contains(r.Evidence, "GPU memory on GPU-5a8e1c2d…") {
		t.Fatalf("one process: %s/%s: %s", r.Cause, r.Confidence, r.Evidence)
	}
}

// TestPredictionBounds: a forecast foresaw this OOM up to 2 × its runway + predictionSlack
// after it was made, that instant included; a pid of 0 on either side names no process, so
// it neither rules the forecast out nor makes it complete.
func TestPredictionBounds(t *testing.T) {
	flat := func(float64) float64 { return float64(38 * gib) }
	const runway = 10 * time.Minute
	limit := 2*runway + predictionSlack
	tests := []struct {
		name            string
		before          time.Duration // how long before the OOM the forecast was made
		predPID, oomPID int
		holds, complete bool
	}{
		{name: "at 2 × runway + slack", before: limit, predPID: 100, oomPID: 100, holds: true, complete: true},
		{name: "just past it", before: limit + time.Nanosecond, predPID: 100, oomPID: 100},
		{name: "at the OOM's instant", before: 0, predPID: 100, oomPID: 100, holds: true, complete: true},
		{name: "a forecast with pid 0 is about no process in particular", before: time.Minute, predPID: 0, oomPID: 100, holds: true},
		{name: "an OOM with pid 0 does not rule out a forecast about pid 300", before: time.Minute, predPID: 300, oomPID: 0, holds: true},
		{name: "pid 0 on both sides names nothing", before: time.Minute, predPID: 0, oomPID: 0, holds: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := leakGPU(flat)
			g.Processes[0].PID = 100
			g.Predictions = []Prediction{{T: oomTime.Add(-tt.before), Runway: runway, Rate: float64(50 * mib), PID: tt.predPID}}
			o := pytorchOOM(2*gib, gib, 37*gib, 37*gib)
			o.PID = tt.oomPID
			th := DefaultThresholds()
			v := ruleMemoryLeak(newFacts(o, g, &th))
			if v.holds != tt.holds || v.complete != tt.complete {
				t.Fatalf("holds=%v complete=%v, want %v %v: %s", v.holds, v.complete, tt.holds, tt.complete, v.evidence)
			}
		})
	}
}

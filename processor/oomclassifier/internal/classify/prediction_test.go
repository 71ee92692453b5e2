package classify

import (
	"strings"
	"testing"
	"time"
)

// A forecast counts only when it foresaw this OOM: made before it, not long past its runway.
// When the window's own fit already shows the leak, the forecast joins its evidence.
func TestPredictionAsLeakEvidence(t *testing.T) {
	flat := func(float64) float64 { return float64(38 * gib) }
	pred := func(before, runway time.Duration, pid int) Prediction {
		return Prediction{T: oomTime.Add(-before), Runway: runway, Rate: float64(50 * mib), PID: pid, Name: "python3"}
	}
	for _, tt := range []struct {
		name string
		p    Prediction
		want bool
	}{
		{"made 8 min before, runway 10 min", pred(8*time.Minute, 10*time.Minute, 100), true},
		{"pid unknown", pred(8*time.Minute, 10*time.Minute, -1), true},
		{"another process", pred(8*time.Minute, 10*time.Minute, 300), false},
		{"stale: 1 h before, runway 10 min", pred(time.Hour, 10*time.Minute, 100), false},
		{"after the OOM", pred(-time.Minute, 10*time.Minute, 100), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := leakGPU(flat)
			g.Predictions = []Prediction{tt.p}
			th := DefaultThresholds()
			v := ruleMemoryLeak(newFacts(pytorchOOM(2*gib, gib, 40*gib, 40*gib), g, &th))
			if v.holds != tt.want {
				t.Fatalf("holds=%v, want %v: %s", v.holds, tt.want, v.evidence)
			}
			if v.holds && !strings.Contains(v.evidence, "predicted this OOM") {
				t.Errorf("evidence: %s", v.evidence)
			}
		})
	}

	g := leakGPU(func(s float64) float64 { return float64(20*gib) + s*float64(30*mib) })
	g.Predictions = []Prediction{pred(5*time.Minute, 6*time.Minute, 100)}
	th := DefaultThresholds()
	v := ruleMemoryLeak(newFacts(pytorchOOM(2*gib, gib, 40*gib, 40*gib), g, &th))
	if !v.holds || !strings.Contains(v.evidence, "grew 30.0 MiB/s") || !strings.Contains(v.evidence, "; the gpu_mem receiver predicted it 5m0s before it") {
		t.Fatalf("evidence: %s", v.evidence)
	}
}

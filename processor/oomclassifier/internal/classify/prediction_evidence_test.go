package classify

import (
	"strings"
	"testing"
	"time"
)

// TestPredictionEvidence: the forecast's evidence quotes what the receiver knew (rate,
// runway, the fastest-growing process with its name and own rate), leaving out what it did
// not (zero rates, no pid, no name); the recommendation quotes the forecast's rate when the
// window's own fit found none.
func TestPredictionEvidence(t *testing.T) {
	flat := func(float64) float64 { return float64(38 * gib) }
	th := DefaultThresholds()
	for _, tt := range []struct {
		name string
		p    Prediction
		want string
	}{
		{"everything known", Prediction{T: oomTime.Add(-8 * time.Minute), Runway: 10 * time.Minute, Rate: float64(50 * mib),
			PID: 100, Name: "python3", ProcessRate: float64(20 * mib)},
			"The gpu_mem receiver predicted this OOM on GPU-5a8e1c2d… 8m0s before it: memory growing steadily at 50.0 MiB/s, " +
				"full in ~10 min, fastest-growing process pid 100 (python3) at 20.0 MiB/s"},
		{"nothing but the runway", Prediction{T: oomTime.Add(-8 * time.Minute), Runway: 10 * time.Minute},
			"The gpu_mem receiver predicted this OOM on GPU-5a8e1c2d… 8m0s before it: memory growing steadily, full in ~10 min"},
		{"a process without a name or rate", Prediction{T: oomTime.Add(-8 * time.Minute), Runway: 10 * time.Minute, PID: 100},
			"The gpu_mem receiver predicted this OOM on GPU-5a8e1c2d… 8m0s before it: memory growing steadily, full in ~10 min, fastest-growing process pid 100"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := leakGPU(flat)
			g.Predictions = []Prediction{tt.p}
			v := ruleMemoryLeak(newFacts(pytorchOOM(2*gib, gib, 37*gib, 37*gib), g, &th))
			if !v.holds || v.evidence != tt.want {
				t.Fatalf("got  %q\nwant %q", v.evidence, tt.want)
			}
		})
	}
	t.Run("without an OOM time", func(t *testing.T) {
		g := leakGPU(flat)
		g.Predictions = []Prediction{{T: oomTime.Add(-8 * time.Minute), Runway: 10 * time.Minute}}
		o := pytorchOOM(2*gib, gib, 37*gib, 37*gib)
		o.Time = time.Time{}
		v := ruleMemoryLeak(newFacts(o, g, &th))
		if want := "The gpu_mem receiver predicted this OOM on GPU-5a8e1c2d…: memory growing steadily, full in ~10 min"; !v.holds || v.evidence != want {
			t.Fatalf("got  %q\nwant %q", v.evidence, want)
		}
	})
	t.Run("the recommendation quotes the forecast's rate", func(t *testing.T) {
		g := leakGPU(flat)
		g.Predictions = []Prediction{{T: oomTime.Add(-8 * time.Minute), Runway: 10 * time.Minute, Rate: float64(50 * mib), PID: 100}}
		r := Classify(pytorchOOM(2*gib, gib, 37*gib, 37*gib), g, th)
		if r.Cause != CauseMemoryLeak || !strings.Contains(r.Recommendation, "about 50.0 MiB/s") {
			t.Fatalf("%s: %s", r.Cause, r.Recommendation)
		}
	})
}

// TestPredictionNamesTheFailingProcess: the forecast is complete evidence when the process it
// names is the failing one, found by pid or by the message's process bytes, or is the
// message's own pid when that pid is not listed.
func TestPredictionNamesTheFailingProcess(t *testing.T) {
	flat := func(float64) float64 { return float64(38 * gib) }
	th := DefaultThresholds()
	pred := func(pid int) []Prediction {
		return []Prediction{{T: oomTime.Add(-8 * time.Minute), Runway: 10 * time.Minute, Rate: float64(50 * mib), PID: pid}}
	}
	t.Run("found by process bytes", func(t *testing.T) {
		g := leakGPU(flat)
		g.Predictions = pred(100)
		o := pytorchOOM(2*gib, gib, 37*gib, 37*gib)
		o.PID, o.ProcessBytes = 7, 38*gib // pid 7 in the container's namespace; pid 100 on the host
		v := ruleMemoryLeak(newFacts(o, g, &th))
		if !v.holds || !v.complete {
			t.Fatalf("holds=%v complete=%v: %s", v.holds, v.complete, v.evidence)
		}
	})
	t.Run("the message's unlisted pid", func(t *testing.T) {
		g := leakGPU(flat)
		g.Predictions = pred(555)
		o := pytorchOOM(2*gib, gib, 37*gib, 37*gib)
		o.PID = 555
		v := ruleMemoryLeak(newFacts(o, g, &th))
		if !v.holds || !v.complete {
			t.Fatalf("holds=%v complete=%v: %s", v.holds, v.complete, v.evidence)
		}
	})
}

package classify

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// leakGPU puts the failing process (pid 100) on a GPU with usage fn.
func leakGPU(fn func(float64) float64) *GPUState {
	p := proc(100, "python", "aaaa", 0)
	p.Series = series(fn)
	p.Bytes = int64(p.Series[len(p.Series)-1].V)
	g := gpuWith(0, p)
	setUsageFromProcesses(g)
	return g
}

func TestMemoryLeakShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]float64, 900)
	for i := range noise {
		noise[i] = (rng.Float64() - 0.5) * float64(100*mib)
	}
	tests := []struct {
		name string
		fn   func(s float64) float64
		want bool
	}{
		{"staircase: 100 MiB every 4 s with ±50 MiB noise", func(s float64) float64 {
			return float64(50*gib) + math.Floor(s/4)*float64(100*mib) + noise[int(s)]
		}, true},
		{"idle, load, then a 30 MiB/s leak", func(s float64) float64 {
			switch {
			case s < 200:
				return 0
			case s < 203:
				return float64(40*gib) * (s - 199) / 4 // a 4-second load, 10 GiB per sample
			default:
				return float64(40*gib) + (s-203)*float64(30*mib)
			}
		}, true},
		{"ramp that stopped 200 s before the OOM", func(s float64) float64 {
			return float64(20*gib) + min(s, 700)*float64(45*mib)
		}, false},
		{"flat with noise", func(s float64) float64 { return float64(60*gib) + noise[int(s)] }, false},
		{"ramp too short: leak began 90 s before the OOM", func(s float64) float64 {
			if s < 810 {
				return float64(40 * gib)
			}
			return float64(44*gib) + (s-810)*float64(200*mib)
		}, false},
		{"sawtooth: grows and is freed every minute", func(s float64) float64 {
			return float64(40*gib) + math.Mod(s, 60)*float64(100*mib)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			f := newFacts(pytorchOOM(2*gib, gib, 40*gib, 40*gib), leakGPU(tt.fn), &th)
			v := ruleMemoryLeak(f)
			if v.holds != tt.want {
				t.Fatalf("holds=%v, want %v (fit %+v) %s", v.holds, tt.want, f.leak, v.evidence)
			}
		})
	}
}

// TestMemoryLeakOnGPUUsage: without the failing process, the GPU's usage decides, with
// medium confidence when other processes share the GPU.
func TestMemoryLeakOnGPUUsage(t *testing.T) {
	g := leakGPU(func(s float64) float64 { return float64(30*gib) + s*float64(40*mib) })
	other := proc(300, "python", "aaaa", gib)
	g.Processes = append(g.Processes, other)
	for i := range g.Usage {
		g.Usage[i].V += float64(gib)
	}
	o := pytorchOOM(2*gib, gib, -1, -1)
	o.PID = -1
	r := Classify(o, g, DefaultThresholds())
	if r.Cause != CauseMemoryLeak || r.Confidence != ConfidenceMedium {
		t.Fatalf("got %s/%s: %s", r.Cause, r.Confidence, r.Evidence)
	}
	if !strings.Contains(r.Evidence, "GPU memory on GPU-") || !strings.Contains(r.Evidence, "grew 40.0 MiB/s") {
		t.Errorf("evidence: %s", r.Evidence)
	}
	if !strings.Contains(r.Recommendation, "40.0 MiB/s") {
		t.Errorf("recommendation lacks the rate: %s", r.Recommendation)
	}
}

func TestFitLine(t *testing.T) {
	s := make([]Point, 100)
	for i := range s {
		s[i] = Point{T: oomTime.Add(time.Duration(i) * 2 * time.Second).UnixNano(), V: 7e10 + 3e6*float64(2*i)}
	}
	fit := fitLine(s)
	if !fit.ok || math.Abs(fit.slope-3e6) > 1e-3 || math.Abs(fit.r2-1) > 1e-9 || fit.dur != 198*time.Second {
		t.Fatalf("fit %+v", fit)
	}
	// Same timestamps throughout: no line.
	for i := range s {
		s[i].T = oomTime.UnixNano()
	}
	if fitLine(s).ok {
		t.Fatal("fitted a vertical series")
	}
}

func TestFitAfterLastStep(t *testing.T) {
	s := series(func(sec float64) float64 {
		switch {
		case sec < 100:
			return 1e9
		case sec < 500:
			return 20e9 // step up at 100
		default:
			return 2e9 // step down at 500
		}
	})
	fit := fitAfterLastStep(s, oomTime, 4e9, 10*time.Second)
	if !fit.ok || fit.points != 400 || fit.startValue != 2e9 {
		t.Fatalf("fit %+v", fit)
	}
	// Points after the OOM are ignored.
	fit = fitAfterLastStep(s, oomTime.Add(-100*time.Second), 4e9, 10*time.Second)
	if fit.points != 300 {
		t.Fatalf("points %d, want 300", fit.points)
	}
	// A jump across a long gap is not a step.
	at := func(d time.Duration) int64 { return oomTime.Add(d).UnixNano() }
	g := []Point{{at(0), 1e9}, {at(time.Second), 1.1e9}, {at(time.Minute), 9e9}, {at(61 * time.Second), 9.1e9}}
	if fit = fitAfterLastStep(g, time.Time{}, 4e9, 10*time.Second); fit.points != 4 {
		t.Fatalf("points %d, want 4", fit.points)
	}
	// Time going backwards or NaN: no fit.
	g[2].T = at(-time.Hour)
	if fitAfterLastStep(g, time.Time{}, 4e9, 10*time.Second).ok {
		t.Fatal("fitted a series going back in time")
	}
	g[2].T, g[2].V = at(time.Minute), math.NaN()
	if fitAfterLastStep(g, time.Time{}, 4e9, 10*time.Second).ok {
		t.Fatal("fitted a NaN")
	}
}

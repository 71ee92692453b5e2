package classify

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gpumem/otelcol-gpumem/internal/ramp"
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

// The classifier's default leak thresholds are the shared fit's defaults, which the gpu_mem
// receiver's runway uses: one definition of a steady ramp.
func TestLeakThresholdsAreTheSharedCriteria(t *testing.T) {
	th := DefaultThresholds()
	if got, want := th.rampCriteria(), ramp.DefaultCriteria(); got != want {
		t.Fatalf("classifier %+v, shared %+v", got, want)
	}
}

package ramp

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)

const window = 15 * time.Minute

// series builds one point per second over the window ending at t0 from fn(seconds since
// the window start).
func series(fn func(sec float64) float64) []Point {
	n := int(window / time.Second)
	s := make([]Point, n)
	start := t0.Add(-window + time.Second)
	for i := range s {
		s[i] = Point{T: start.Add(time.Duration(i) * time.Second).UnixNano(), V: fn(float64(i))}
	}
	return s
}

func TestLine(t *testing.T) {
	s := make([]Point, 100)
	for i := range s {
		s[i] = Point{T: t0.Add(time.Duration(i) * 2 * time.Second).UnixNano(), V: 7e10 + 3e6*float64(2*i)}
	}
	fit := Line(s)
	if !fit.OK || math.Abs(fit.Slope-3e6) > 1e-3 || math.Abs(fit.R2-1) > 1e-9 || fit.Dur != 198*time.Second {
		t.Fatalf("fit %+v", fit)
	}
	// Same timestamps throughout: no line.
	for i := range s {
		s[i].T = t0.UnixNano()
	}
	if Line(s).OK {
		t.Fatal("fitted a vertical series")
	}
}

func TestAfterLastStep(t *testing.T) {
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
	fit := AfterLastStep(s, t0, 4e9, 10*time.Second)
	if !fit.OK || fit.Points != 400 || fit.StartValue != 2e9 {
		t.Fatalf("fit %+v", fit)
	}
	// Points after the cut are ignored.
	fit = AfterLastStep(s, t0.Add(-100*time.Second), 4e9, 10*time.Second)
	if fit.Points != 300 {
		t.Fatalf("points %d, want 300", fit.Points)
	}
	// A jump across a long gap is not a step.
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	g := []Point{{at(0), 1e9}, {at(time.Second), 1.1e9}, {at(time.Minute), 9e9}, {at(61 * time.Second), 9.1e9}}
	if fit = AfterLastStep(g, time.Time{}, 4e9, 10*time.Second); fit.Points != 4 {
		t.Fatalf("points %d, want 4", fit.Points)
	}
	// Time going backwards or NaN: no fit.
	g[2].T = at(-time.Hour)
	if AfterLastStep(g, time.Time{}, 4e9, 10*time.Second).OK {
		t.Fatal("fitted a series going back in time")
	}
	g[2].T, g[2].V = at(time.Minute), math.NaN()
	if AfterLastStep(g, time.Time{}, 4e9, 10*time.Second).OK {
		t.Fatal("fitted a NaN")
	}
}

// TestRampShapes: what the criteria call a steady ramp on an 80 GiB GPU, with noise.
func TestRampShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]float64, 900)
	for i := range noise {
		noise[i] = (rng.Float64() - 0.5) * 100 * mib
	}
	const total = 80 * gib
	tests := []struct {
		name string
		fn   func(s float64) float64
		want bool
	}{
		{"leak 30 MiB/s with ±50 MiB noise", func(s float64) float64 { return 20*gib + s*30*mib + noise[int(s)] }, true},
		{"staircase: 100 MiB every 4 s", func(s float64) float64 { return 50*gib + math.Floor(s/4)*100*mib + noise[int(s)] }, true},
		{"idle, a 40 GiB load in 4 s, then a 30 MiB/s leak", func(s float64) float64 {
			switch {
			case s < 500:
				return 1 * gib
			case s < 504:
				return 1*gib + (s-499)*10*gib
			default:
				return 41*gib + (s-504)*30*mib + noise[int(s)]
			}
		}, true},
		{"model load in 4 s, then flat", func(s float64) float64 {
			if s < 300 {
				return 2 * gib
			}
			return 2*gib + min(s-300, 4)*10*gib + noise[int(s)]
		}, false},
		{"gradual load (2 GiB shards every 5 s for 2 min), then flat", func(s float64) float64 {
			return 4*gib + math.Floor(min(s, 120)/5)*2*gib + noise[int(s)]
		}, false},
		{"sawtooth: 100 MiB/s, freed every minute", func(s float64) float64 { return 40*gib + math.Mod(s, 60)*100*mib }, false},
		{"sawtooth below the step size: 20 MiB/s freed every 3 min", func(s float64) float64 {
			return 40*gib + math.Mod(s, 180)*20*mib + noise[int(s)]
		}, false},
		{"flat with noise", func(s float64) float64 { return 60*gib + noise[int(s)] }, false},
		{"too slow: 0.5 MiB/s", func(s float64) float64 { return 60*gib + s*0.5*mib }, false},
		{"ramp that stopped 3 min ago", func(s float64) float64 { return 20*gib + min(s, 720)*45*mib }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultCriteria()
			fit, ok := c.Ramp(series(tt.fn), time.Time{}, total)
			if ok != tt.want {
				t.Fatalf("ramp=%v, want %v (fit %+v)", ok, tt.want, fit)
			}
		})
	}
}

func TestStepScalesWithTotal(t *testing.T) {
	c := DefaultCriteria()
	if got := c.Step(0); got != gib {
		t.Errorf("unknown total: %v", got)
	}
	if got := c.Step(80 * gib); got != 4*gib {
		t.Errorf("80 GiB: %v", got)
	}
}

func BenchmarkRamp(b *testing.B) {
	s := series(func(sec float64) float64 { return 20*gib + sec*30*mib })[:600]
	c := DefaultCriteria()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Ramp(s, time.Time{}, 80*gib); !ok {
			b.Fatal("no ramp")
		}
	}
}

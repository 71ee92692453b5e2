package window

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"
)

const mib = int64(1) << 20

// jitter is where a collection's timestamp falls around its second: the receiver stamps each
// collection with time.Now() when its ticker fires, some tens to hundreds of microseconds late.
func jitter(r *rand.Rand) int64 { return r.Int64N(int64(500 * time.Microsecond)) }

// builtinCollection transcribes the receiver's built-in demo scenario (simnvml.BuiltinScenario:
// a 60 s loop on 8 × H100 80GB) into the samples one collection at second sec gives each GPU.
// The scenario is internal to the receiver, so it is restated here; its shapes are what
// matters: steps, flat workers, one ramp, a zombie, retired pages.
func builtinCollection(g, sec int, at int64) []Sample {
	const total = 81559 * mib
	loop := sec % 60
	var procs []Sample
	proc := func(pid int, name string, v int64) {
		procs = append(procs, Sample{Kind: ProcessBytes, T: at, V: v, Process: ProcessInfo{PID: pid, Name: name, Type: "compute",
			ContainerID: "c0ffee" + strconv.Itoa(g), PodUID: "pod-" + strconv.Itoa(g)}})
	}
	var unattributed int64
	var extra []Sample
	switch g {
	case 0, 1:
		rank := int64(58)
		if loop >= 5 {
			rank = 62
		}
		proc(41001+g, "python3", rank<<30)
		for w := 0; w < 4; w++ {
			proc(41011+g+10*w, "pt_data_worker", 512*mib)
		}
	case 2:
		if loop < 21 {
			proc(42001, "python3", 38<<30)
		}
	case 3:
		if loop <= 50 {
			proc(43001, "python3", 6<<30+int64(loop)*(72<<30)/50)
		}
	case 4:
		for w := 0; w < 12; w++ {
			proc(44001+w, "gunicorn", 1536*mib)
		}
	case 5:
		unattributed = 6 << 30
		proc(45001, "python3", 70<<30)
	case 6:
		proc(46001, "python3", 24<<30)
		proc(46101, "ollama", 18<<30)
		pending := int64(0)
		if loop >= 30 {
			pending = 1
		}
		extra = append(extra, Sample{Kind: RetiredPages, T: at, V: 2, Label: "multiple_single_bit_ecc_errors"},
			Sample{Kind: RetiredPages, T: at, V: pending, Label: "double_bit_ecc_error"},
			Sample{Kind: RetiredPagesPending, T: at, V: pending})
	case 7:
		proc(47001, "tritonserver", 20<<30)
		proc(47101, "python3", 12<<30)
		proc(47201, "python3", 6<<30)
		unattributed = 512 * mib
	}
	var used int64
	for _, p := range procs {
		used += p.V
	}
	used += unattributed
	out := []Sample{
		{Kind: Used, T: at, V: used}, {Kind: Total, T: at, V: total}, {Kind: Free, T: at, V: total - used},
		{Kind: Reserved, T: at, V: 563 * mib}, {Kind: Unattributed, T: at, V: unattributed},
	}
	return append(append(out, procs...), extra...)
}

// fleetCollection is one GPU of an 8-GPU node busy with 16 processes: the usage drifts the way
// a training step's activations come and go, the processes are mostly flat with occasional
// allocator growth, one leaks slowly.
func fleetCollection(r *rand.Rand, g, sec int, at int64) []Sample {
	out := make([]Sample, 0, 21)
	var used int64
	for p := 0; p < 16; p++ {
		v := int64(p+1) << 30 / 4 // 34 GiB in all, on an 80 GiB GPU
		switch {
		case p == 0:
			v += int64(sec) * 2 * mib // a slow leak
		case r.IntN(30) == 0:
			v += int64(r.IntN(8)) * 2 * mib // the caching allocator grows by 2 MiB blocks
		}
		used += v
		out = append(out, Sample{Kind: ProcessBytes, T: at, V: v, Process: ProcessInfo{PID: 1000 + 16*g + p, Name: "python",
			ContainerID: "c0ffee", Type: "compute"}})
	}
	const total = 80 << 30
	return append(out,
		Sample{Kind: Used, T: at, V: used}, Sample{Kind: Total, T: at, V: total}, Sample{Kind: Free, T: at, V: total - used},
		Sample{Kind: Reserved, T: at, V: 563 * mib}, Sample{Kind: Unattributed, T: at, V: 0})
}

// BenchmarkBytesPerSample fills a 15-minute window of 8 GPUs at 1 s and reports the heap the
// store holds per stored sample (runtime.MemStats after a GC, so everything counts: series,
// maps, process descriptions). One op is one whole fill.
func BenchmarkBytesPerSample(b *testing.B) {
	for _, w := range []struct {
		name string
		gen  func(r *rand.Rand, g, sec int, at int64) []Sample
	}{
		{"builtin", func(_ *rand.Rand, g, sec int, at int64) []Sample { return builtinCollection(g, sec, at) }},
		{"8gpu_x_16proc", fleetCollection},
	} {
		b.Run(w.name, func(b *testing.B) {
			var perSample float64
			for i := 0; i < b.N; i++ {
				perSample = fillAndMeasure(w.gen)
			}
			b.ReportMetric(perSample, "bytes/sample")
		})
	}
}

// settle collects twice: objects in sync.Pools survive one collection (in the victim cache)
// and would otherwise be freed during the measurement, making the window look smaller.
func settle() {
	runtime.GC()
	runtime.GC()
}

func fillAndMeasure(gen func(r *rand.Rand, g, sec int, at int64) []Sample) float64 {
	var before, after runtime.MemStats
	settle()
	runtime.ReadMemStats(&before)
	s := New(defaultConfig())
	r := rand.New(rand.NewPCG(1, 2))
	const secs = 900
	for sec := 0; sec < secs; sec++ {
		at := sec0(sec) + jitter(r)
		for g := 0; g < 8; g++ {
			ss := gen(r, g, sec, at)
			s.Observe(GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}, GPUInfo{Index: g}, ss)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(storedPoints(s))
}

// storedPoints counts the points the store holds (step series store a value only when it
// changes, so this is fewer than were observed).
func storedPoints(s *Store) int {
	n := 0
	for _, h := range s.hosts {
		for _, g := range h.gpus {
			for i := range g.gauges {
				n += g.gauges[i].len()
			}
			for _, m := range g.labelled {
				for _, ls := range m {
					n += ls.len()
				}
			}
			for _, p := range g.procs {
				n += p.s.len()
			}
		}
	}
	return n
}

func sec0(n int) int64 { return t0.UnixNano() + int64(n)*int64(time.Second) }

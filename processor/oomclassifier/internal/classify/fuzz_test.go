package classify

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var causeOrder = []string{CauseGPUFault, CauseZombieContext, CauseOtherTenant, CauseWorkerContextOverhead,
	CauseFragmentation, CauseMemoryLeak, CauseCapacityLoss, CauseWorkloadTooLarge, CauseUnknown}

// FuzzClassify builds an OOM and a GPU state from fuzzed numbers (series and processes from
// a fuzzed seed) and checks Classify neither panics nor breaks its output contract.
func FuzzClassify(f *testing.F) {
	f.Add(int64(2*gib), int64(h100Total), int64(900*mib), int64(70*gib), int64(71*gib), int64(-1),
		int64(h100Total), int64(78*gib), int64(512*mib), int64(0), int64(time.Second), 100, uint64(1), uint8(4), true)
	f.Add(int64(-1), int64(-1), int64(-1), int64(-1), int64(-1), int64(-1),
		int64(-1), int64(-1), int64(-1), int64(-1), int64(-1), -1, uint64(0), uint8(0), false)
	f.Add(int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64), int64(1),
		int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64), int64(math.MinInt64), 0, uint64(7), uint8(255), true)
	f.Fuzz(func(t *testing.T, req, total, free, alloc, reserved, procBytes,
		gTotal, used, gReserved, unattr, age int64, pid int, seed uint64, nproc uint8, withGPU bool) {
		oom := OOM{Framework: "pytorch", RequestedBytes: req, TotalBytes: total, FreeBytes: free,
			AllocatedBytes: alloc, ReservedBytes: reserved, ProcessBytes: procBytes, DeviceIndex: pid % 8, PID: pid, Time: oomTime}
		var g *GPUState
		if withGPU {
			g = fuzzGPU(rand.New(rand.NewPCG(seed, uint64(nproc))), gTotal, used, gReserved, unattr, time.Duration(age), int(nproc%24), pid)
		}
		th := DefaultThresholds()
		if seed%5 == 0 {
			th = Thresholds{} // every threshold zero: rules must still not panic
		}
		checkResult(t, Classify(oom, g, th))
	})
}

// fuzzGPU spreads random (sometimes absurd) values over every field the rules read.
func fuzzGPU(rng *rand.Rand, total, used, reserved, unattr int64, age time.Duration, nproc, pid int) *GPUState {
	wild := func() float64 {
		switch rng.IntN(6) {
		case 0:
			return math.NaN()
		case 1:
			return math.Inf(1 - 2*rng.IntN(2))
		case 2:
			return float64(rng.Int64()) * float64(1-2*rng.IntN(2))
		default:
			return float64(rng.Int64N(100 * gib))
		}
	}
	mkSeries := func(n int) []Point {
		s := make([]Point, n)
		t := oomTime.Add(-time.Duration(n) * time.Second)
		v, slope := float64(rng.Int64N(80*gib)), float64(rng.Int64N(100*mib))
		for i := range s {
			t = t.Add(time.Duration(rng.Int64N(3)-rng.Int64N(2)) * time.Second) // sometimes back in time
			v += slope
			if rng.IntN(50) == 0 {
				v = wild()
			}
			s[i] = Point{T: t.UnixNano(), V: v}
		}
		return s
	}
	g := &GPUState{HWID: "GPU-fuzz", Name: "NVIDIA H100 80GB HBM3", MatchedBy: []string{"pid", "only_gpu", "device_index", ""}[rng.IntN(4)],
		Total: total, Used: used, Free: total - used, Reserved: reserved, Unattributed: unattr, SampleAge: age,
		Usage: mkSeries(rng.IntN(200)), RetiredPagesPending: rng.IntN(2) == 0, RemapFailed: rng.IntN(4) == 0}
	if rng.IntN(2) == 0 {
		g.RetiredPages = map[string]int64{"single_bit_ecc": rng.Int64() - rng.Int64(), "double_bit_ecc": rng.Int64N(100)}
	}
	containers := []string{"", "aaaa", "bbbb"}
	for i := range nproc {
		p := Process{PID: pid + rng.IntN(3) - 1 + i*rng.IntN(2), Name: []string{"python", "w", ""}[rng.IntN(3)],
			ContainerID: containers[rng.IntN(3)], PodUID: containers[rng.IntN(3)],
			Bytes: int64(wild()), Series: mkSeries(rng.IntN(100))}
		g.Processes = append(g.Processes, p)
	}
	for range rng.IntN(4) {
		g.Xids = append(g.Xids, XidEvent{T: oomTime.Add(time.Duration(rng.Int64() - rng.Int64())), Code: rng.IntN(200), Fault: rng.IntN(2) == 0})
	}
	return g
}

// checkResult asserts the output contract the processor relies on.
func checkResult(t *testing.T, r Result) {
	t.Helper()
	ci := slices.Index(causeOrder, r.Cause)
	if ci < 0 {
		t.Fatalf("cause %q", r.Cause)
	}
	// The contributing causes follow table order among themselves; a fault is never only
	// contributing, and the cause is not repeated.
	last := -1
	for _, c := range r.Contributing {
		i := slices.Index(causeOrder, c)
		if i <= last || c == CauseUnknown || c == r.Cause || c == CauseGPUFault {
			t.Fatalf("contributing %v out of order or repeating %q", r.Contributing, r.Cause)
		}
		last = i
	}
	if r.Confidence != ConfidenceHigh && r.Confidence != ConfidenceMedium && r.Confidence != ConfidenceLow {
		t.Fatalf("confidence %q", r.Confidence)
	}
	if r.Evidence == "" || !strings.HasSuffix(r.Evidence, ".") || r.Recommendation == "" {
		t.Fatalf("evidence %q recommendation %q", r.Evidence, r.Recommendation)
	}
	if strings.Contains(r.Evidence, "%!") || strings.Contains(r.Recommendation, "%!") {
		t.Fatalf("format error: %q", r.Evidence)
	}
}

package classify

import (
	"math"
	"testing"
	"time"
)

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{-1, "unknown"},
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{900 * mib, "900.0 MiB"},
		{14*gib + 215*mib, "14.2 GiB"},
		{h100Total, "79.6 GiB"},
		{1 << 62, "4.0 EiB"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.in); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShortfallClause(t *testing.T) {
	f := &facts{oom: blankOOM(), free: -1}
	if got := shortfallClause(f); got != "" {
		t.Errorf("no request: %q", got)
	}
	f.oom.RequestedBytes, f.free = 2*gib, 900*mib
	if got, want := shortfallClause(f), "; the request of 2.0 GiB needed 1.1 GiB more than the 900.0 MiB free"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestHumanDurations(t *testing.T) {
	if got := humanDuration(6*time.Minute + 10*time.Second + 300*time.Millisecond); got != "6m10s" {
		t.Errorf("humanDuration = %q", got)
	}
	if got := humanRunway(7*time.Minute + 20*time.Second); got != "7 min" {
		t.Errorf("humanRunway = %q", got)
	}
}

func TestSameWorkload(t *testing.T) {
	a := Process{PID: 1, Name: "python", ContainerID: "c1", PodUID: "p1"}
	tests := []struct {
		b    Process
		want bool
	}{
		{Process{ContainerID: "c2", PodUID: "p1"}, true}, // same pod, sidecar container
		{Process{ContainerID: "c1"}, true},
		{Process{ContainerID: "c2"}, false},
		{Process{Name: "python"}, false}, // bare process vs. containerised
	}
	for i, tt := range tests {
		if got := sameWorkload(&a, &tt.b); got != tt.want {
			t.Errorf("%d: got %v, want %v", i, got, tt.want)
		}
	}
	bare1, bare2 := Process{Name: "python"}, Process{Name: "Xorg"}
	if !sameWorkload(&bare1, &bare1) || sameWorkload(&bare1, &bare2) {
		t.Error("bare processes are grouped by executable name")
	}
	worker, main, other := Process{Name: "pt_data_worker"}, Process{Name: "python3.11"}, Process{Name: "vllm"}
	if !sameWorkload(&worker, &main) || !sameWorkload(&main, &worker) || sameWorkload(&worker, &other) {
		t.Error("a bare DataLoader worker belongs with a bare Python process only")
	}
	inContainer := Process{Name: "python3", ContainerID: "c1"}
	if sameWorkload(&worker, &inContainer) {
		t.Error("a bare worker never belongs with a containerised process")
	}
}

// TestHumanBytesBeyondEiB: rates and fitted values are floats without an upper bound; past
// the largest unit the number grows instead of the unit.
func TestHumanBytesBeyondEiB(t *testing.T) {
	if got := humanBytesF(float64(1<<60) * 2048); got != "2048.0 EiB" {
		t.Errorf("humanBytesF(2^71) = %q", got)
	}
	if got := humanBytesF(-1536); got != "-1.5 KiB" {
		t.Errorf("humanBytesF(-1536) = %q", got)
	}
}

func TestShortID(t *testing.T) {
	for in, want := range map[string]string{
		"GPU-5a8e1c2d":  "GPU-5a8e1c2d", // 12 characters: kept whole
		"GPU-5a8e1c2d0": "GPU-5a8e1c2d…",
		"":              "",
	} {
		if got := shortID(in); got != want {
			t.Errorf("shortID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		part, whole int64
		want        string
	}{{1, 8, "12.5%"}, {0, 5, "0.0%"}, {3, 2, "150.0%"}, {1, 0, "?%"}, {1, -1, "?%"}} {
		if got := percent(tt.part, tt.whole); got != tt.want {
			t.Errorf("percent(%d, %d) = %q, want %q", tt.part, tt.whole, got, tt.want)
		}
	}
}

// TestHumanDurationRounding: tenths below ten seconds either side of zero, whole seconds
// from there (at exactly ten seconds both roundings agree).
func TestHumanDurationRounding(t *testing.T) {
	for _, tt := range []struct {
		in   time.Duration
		want string
	}{
		{3260 * time.Millisecond, "3.3s"},
		{-3260 * time.Millisecond, "-3.3s"},
		{9940 * time.Millisecond, "9.9s"},
		{12400 * time.Millisecond, "12s"},
		{-12400 * time.Millisecond, "-12s"},
	} {
		if got := humanDuration(tt.in); got != tt.want {
			t.Errorf("humanDuration(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestHumanRunwayUnits: seconds below a minute, minutes below two hours, hours from there.
func TestHumanRunwayUnits(t *testing.T) {
	for _, tt := range []struct {
		in   time.Duration
		want string
	}{
		{59 * time.Second, "59 s"},
		{time.Minute, "1 min"},
		{2*time.Hour - time.Minute, "119 min"},
		{2 * time.Hour, "2.0 h"},
	} {
		if got := humanRunway(tt.in); got != tt.want {
			t.Errorf("humanRunway(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestNoGPUClauses: each reason the window matched no GPU reads as what happened.
func TestNoGPUClauses(t *testing.T) {
	o := blankOOM()
	for _, tt := range []struct {
		ng       NoGPU
		pid, dev int
		want     string
	}{
		{NoGPU{Reason: NoGPUNoMetricsPipeline}, -1, -1, "no GPU metrics at all (the processor is in no metrics pipeline)"},
		{NoGPU{Reason: NoGPUNoHostMetrics, Host: "node-7"}, -1, -1, `no GPU metrics have arrived for host "node-7"`},
		{NoGPU{Reason: NoGPUNoHostMetrics}, -1, -1, "no GPU metrics have arrived for records without host.name"},
		{NoGPU{Reason: NoGPUMetricsTooOld, Host: "node-7", Window: 15 * time.Minute}, -1, -1,
			`the newest GPU metrics of host "node-7" are more than 15m0s older than the OOM`},
		{NoGPU{Reason: NoGPUNotMatched, Host: "node-7"}, 0, 0,
			`no GPU of host "node-7" matched the OOM: pid 0 was not seen on exactly one of its GPUs, no single GPU was reporting at the OOM's time and none has nvidia.gpu.index 0 alone`},
		{NoGPU{Reason: NoGPUNotMatched, Host: "node-7"}, -1, -1,
			`no GPU of host "node-7" matched the OOM: the record names no pid, no single GPU was reporting at the OOM's time and the message gives no device ordinal`},
		{NoGPU{Reason: NoGPUBeforeWindow, Host: "node-7", Window: 15 * time.Minute}, -1, -1,
			`the OOM's time is more than 15m0s before the newest GPU metrics of host "node-7": the window no longer holds that moment, as for a late or replayed record or a log clock behind`},
		{NoGPU{}, -1, -1, "no GPU metrics matched the OOM"},
	} {
		o.NoGPU, o.PID, o.DeviceIndex = tt.ng, tt.pid, tt.dev
		if got := noGPUClause(o); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

// TestSpecTotalsAreMiB: every usual total is what nvidia-smi prints, a whole number of MiB,
// and a real card's size (8 GiB to 200 GiB).
func TestSpecTotalsAreMiB(t *testing.T) {
	for name, b := range defaultSpecTotals() {
		if b%mib != 0 || b < 8*gib || b > 200*gib {
			t.Errorf("%s: %d bytes", name, b)
		}
	}
}

// TestPlausible: finite, 0 to the limit inclusive.
func TestPlausible(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want bool
	}{{0, true}, {100, true}, {101, false}, {-1, false}, {math.NaN(), false}, {math.Inf(1), false}, {math.Inf(-1), false}} {
		if got := plausible(tt.v, 100); got != tt.want {
			t.Errorf("plausible(%v, 100) = %v", tt.v, got)
		}
	}
}

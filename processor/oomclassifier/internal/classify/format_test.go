package classify

import (
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

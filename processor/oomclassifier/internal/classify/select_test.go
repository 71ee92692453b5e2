package classify

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Tests of Classify's own promises (classify.go): how the failing process is found, how a
// tie between explanations is broken, how confidence is graded at its bounds, and what the
// evidence says when no rule holds.

// TestFailingProcessByBytes: a pid from another namespace is not listed; the message's own
// process total then identifies the failing process, within max(64 MiB,
// process_bytes_tolerance × that total), and only when exactly one process is that close.
// Found, the failing process is the 18 GiB one, so the 40 GiB container is the other tenant;
// not found, the largest workload is assumed to be the failing one.
func TestFailingProcessByBytes(t *testing.T) {
	const failingIs18, notIdentified = "40.0 GiB (50.2% of 79.6 GiB) used by pid 100 (python, container aaaa) outside the failing container",
		"used by pid 4242 (vllm, container bbbb) outside the largest workload (the failing process was not identified)"
	tests := []struct {
		name       string
		procBytes  int64 // the message's process total
		tenantSize int64 // the listed size of pid 4242
		th         func(*Thresholds)
		extra      []Process
		want       string
	}{
		{name: "exact", procBytes: 18 * gib, tenantSize: 18 * gib, want: failingIs18},
		// 2% of 18 GiB is 368.6 MiB: that is the tolerance.
		{name: "at the tolerance below", procBytes: 18 * gib, tenantSize: 18*gib - 18*gib/50, want: failingIs18},
		{name: "at the tolerance above", procBytes: 18 * gib, tenantSize: 18*gib + 18*gib/50, want: failingIs18},
		{name: "just past the tolerance", procBytes: 18 * gib, tenantSize: 18*gib + 18*gib/50 + 1, want: notIdentified},
		{name: "just past the tolerance below", procBytes: 18 * gib, tenantSize: 18*gib - 18*gib/50 - 1, want: notIdentified},
		// Small processes: the 64 MiB floor, not 2% (20 MiB of 1 GiB), is the tolerance.
		{name: "two processes as close: ambiguous", procBytes: 18 * gib, tenantSize: 18 * gib,
			extra: []Process{proc(5000, "vllm", "cccc", 18*gib+10*mib)},
			want:  "used by 2 processes outside the largest workload (the failing process was not identified)"},
		{name: "no process total", procBytes: -1, tenantSize: 18 * gib, want: notIdentified},
		{name: "a zero process total identifies nothing", procBytes: 0, tenantSize: 0, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			if tt.th != nil {
				tt.th(&th)
			}
			o := pytorchOOM(2*gib, 900*mib, 17*gib, 17*gib+500*mib)
			o.PID, o.ProcessBytes = 7, tt.procBytes
			ps := append([]Process{proc(100, "python", "aaaa", 40*gib), proc(4242, "vllm", "bbbb", tt.tenantSize)}, tt.extra...)
			r := Classify(o, gpuWith(0, ps...), th)
			if tt.want == "" {
				// pid 4242 holds nothing: nothing may be taken for the failing process.
				f := newFacts(o, gpuWith(0, ps...), &th)
				if f.failing != nil {
					t.Fatalf("failing process %d found by a zero total", f.failing.PID)
				}
				return
			}
			if r.Cause != CauseOtherTenant || !strings.Contains(r.Evidence, tt.want) {
				t.Fatalf("got %s: %s\nwant evidence with %q", r.Cause, r.Evidence, tt.want)
			}
			// Found by bytes is not found by pid: never high.
			if r.Confidence != ConfidenceMedium {
				t.Errorf("confidence %s", r.Confidence)
			}
		})
	}
	t.Run("the floor is 64 MiB", func(t *testing.T) {
		th := DefaultThresholds()
		g := gpuWith(0, proc(100, "python", "aaaa", gib+64*mib), proc(200, "python", "bbbb", 40*gib))
		o := blankOOM()
		o.ProcessBytes = gib // 2% is 20 MiB; the floor makes 64 MiB the tolerance
		if f := newFacts(o, g, &th); f.failing == nil || f.failing.PID != 100 || f.failingBy != "bytes" {
			t.Fatalf("64 MiB off: failing %+v by %q", f.failing, f.failingBy)
		}
		g.Processes[0].Bytes++
		if f := newFacts(o, g, &th); f.failing != nil {
			t.Fatalf("64 MiB + 1 B off: failing pid %d", f.failing.PID)
		}
	})
}

// TestPIDZeroIdentifiesNobody: pid 0 is no process (the kernel's idle task; NVML lists real
// pids only), so a message or record with pid 0 must not pick a listed entry whose pid is 0.
func TestPIDZeroIdentifiesNobody(t *testing.T) {
	th := DefaultThresholds()
	o := pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib)
	o.PID = 0
	g := gpuWith(0, proc(0, "python", "aaaa", 18*gib), proc(100, "python", "bbbb", 60*gib))
	f := newFacts(o, g, &th)
	if f.failing != nil {
		t.Fatalf("pid 0 matched %+v by %s", f.failing.PID, f.failingBy)
	}
	f.oom.PID = 100
	if failing, by := findFailing(f.oom, g, &th); failing == nil || failing.PID != 100 || by != "pid" {
		t.Fatalf("pid 100: %+v by %q", failing, by)
	}
}

// TestTieGoesToTableOrder: two causes explaining exactly the same memory; the one earlier in
// the causes table (zombie_context before other_tenant) is the cause.
func TestTieGoesToTableOrder(t *testing.T) {
	g := gpuWith(10*gib, proc(100, "python", "aaaa", 50*gib), proc(300, "other", "cccc", 10*gib))
	r := Classify(pytorchOOM(4*gib, 600*mib, 49*gib, 50*gib), g, DefaultThresholds())
	if r.Cause != CauseZombieContext || !slices.Equal(r.Contributing, []string{CauseOtherTenant}) {
		t.Fatalf("got %s %v: %s", r.Cause, r.Contributing, r.Evidence)
	}
	// One byte more for the tenant and it explains more.
	g = gpuWith(10*gib, proc(100, "python", "aaaa", 50*gib), proc(300, "other", "cccc", 10*gib+1))
	r = Classify(pytorchOOM(4*gib, 600*mib, 49*gib, 50*gib), g, DefaultThresholds())
	if r.Cause != CauseOtherTenant || !slices.Equal(r.Contributing, []string{CauseZombieContext}) {
		t.Fatalf("got %s %v: %s", r.Cause, r.Contributing, r.Evidence)
	}
}

// TestSampleAgeBounds: a sample exactly max_sample_age old is still fresh; one nanosecond
// older is not; a zero age is fresh and a negative one (a sample after the OOM) is not.
func TestSampleAgeBounds(t *testing.T) {
	th := DefaultThresholds()
	for _, tt := range []struct {
		age  time.Duration
		want string
	}{
		{th.MaxSampleAge, ConfidenceHigh},
		{th.MaxSampleAge + 1, ConfidenceMedium},
		{0, ConfidenceHigh},
		{-1, ConfidenceMedium},
	} {
		g := gpuWith(0, proc(100, "python", "aaaa", 60*gib), proc(4242, "python", "bbbb", 18*gib))
		g.SampleAge = tt.age
		r := Classify(pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib), g, th)
		if r.Cause != CauseOtherTenant || r.Confidence != tt.want {
			t.Errorf("age %v: %s/%s, want %s", tt.age, r.Cause, r.Confidence, tt.want)
		}
	}
}

// TestUnknownSaysWhatWasMissing: with no rule holding, the evidence names each missing
// input, or, when nothing was missing, the numbers every rule looked at.
func TestUnknownSaysWhatWasMissing(t *testing.T) {
	t.Run("a GPU without history, processes or a used sample", func(t *testing.T) {
		g := gpuWith(0)
		g.Usage, g.Processes, g.Used = nil, nil, -1
		r := Classify(blankOOM(), g, DefaultThresholds())
		want := "Too little data to tell: no memory history for GPU-5a8e1c2d…, no per-process memory, no used-memory sample, " +
			"the message gave no request size, the message gave no allocator numbers."
		if r.Cause != CauseUnknown || r.Confidence != ConfidenceLow || r.Evidence != want {
			t.Fatalf("got %s/%s:\n%s\nwant\n%s", r.Cause, r.Confidence, r.Evidence, want)
		}
	})
	t.Run("allocated known, reserved not", func(t *testing.T) {
		o := pytorchOOM(2*gib, 900*mib, 20*gib, -1)
		r := Classify(o, gpuWith(0, proc(100, "python", "aaaa", 21*gib)), DefaultThresholds())
		want := "Too little data to tell: the message gave no allocator numbers."
		if r.Cause != CauseUnknown || r.Evidence != want {
			t.Fatalf("got %s: %q, want %q", r.Cause, r.Evidence, want)
		}
	})
	t.Run("a request with no capacity known anywhere", func(t *testing.T) {
		o := blankOOM()
		o.RequestedBytes = 2 * gib
		r := Classify(o, nil, DefaultThresholds())
		want := "Too little data to tell: no GPU metrics matched the OOM, the message gave no allocator numbers, the GPU's capacity is unknown."
		if r.Cause != CauseUnknown || r.Evidence != want {
			t.Fatalf("got %s: %q, want %q", r.Cause, r.Evidence, want)
		}
	})
	t.Run("everything known, nothing held", func(t *testing.T) {
		r := Classify(pytorchOOM(2*gib, 900*mib, 20*gib, 20*gib+100*mib), gpuWith(0, proc(100, "python", "aaaa", 21*gib)), DefaultThresholds())
		want := "No rule held: GPU-5a8e1c2d… had 900.0 MiB free of 79.6 GiB with no fault, unattributed memory, other tenant, " +
			"fragmentation, ramp or capacity loss; the request of 2.0 GiB needed 1.1 GiB more than the 900.0 MiB free."
		if r.Cause != CauseUnknown || r.Confidence != ConfidenceLow || r.Evidence != want {
			t.Fatalf("got %s/%s:\n%s\nwant\n%s", r.Cause, r.Confidence, r.Evidence, want)
		}
	})
	t.Run("free unknown everywhere", func(t *testing.T) {
		g := gpuWith(0, proc(100, "python", "aaaa", 21*gib))
		g.Free = -1
		r := Classify(pytorchOOM(2*gib, -1, 20*gib, 20*gib+100*mib), g, DefaultThresholds())
		if !strings.Contains(r.Evidence, "had unknown free of 79.6 GiB") || !strings.HasSuffix(r.Evidence, "; the request was 2.0 GiB.") {
			t.Fatalf("got %s: %s", r.Cause, r.Evidence)
		}
	})
}

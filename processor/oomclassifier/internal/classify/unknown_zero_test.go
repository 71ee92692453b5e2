package classify

import "testing"

// TestZeroIsAStatedValue: a used sample of 0 bytes, a request of 0 bytes and an allocator
// that reports 0 allocated of 0 reserved (the first allocation of a process) are numbers,
// not missing ones: the unknown evidence does not call them missing.
func TestZeroIsAStatedValue(t *testing.T) {
	t.Run("used 0", func(t *testing.T) {
		g := gpuWith(0)
		g.Used, g.Free = 0, g.Total
		r := Classify(pytorchOOM(2*gib, 900*mib, 20*gib, 20*gib+100*mib), g, DefaultThresholds())
		if want := "Too little data to tell: no per-process memory."; r.Cause != CauseUnknown || r.Evidence != want {
			t.Fatalf("got %s: %q, want %q", r.Cause, r.Evidence, want)
		}
	})
	t.Run("allocated 0 of reserved 0", func(t *testing.T) {
		r := Classify(pytorchOOM(2*gib, 900*mib, 0, 0), gpuWith(0, proc(100, "python", "aaaa", 21*gib)), DefaultThresholds())
		want := "No rule held: GPU-5a8e1c2d… had 900.0 MiB free of 79.6 GiB with no fault, unattributed memory, other tenant, " +
			"fragmentation, ramp or capacity loss; the request of 2.0 GiB needed 1.1 GiB more than the 900.0 MiB free."
		if r.Cause != CauseUnknown || r.Evidence != want {
			t.Fatalf("got %s:\n%q\nwant\n%q", r.Cause, r.Evidence, want)
		}
	})
	t.Run("a request of 0 bytes", func(t *testing.T) {
		r := Classify(pytorchOOM(0, 900*mib, 20*gib, 20*gib+100*mib), gpuWith(0, proc(100, "python", "aaaa", 21*gib)), DefaultThresholds())
		want := "No rule held: GPU-5a8e1c2d… had 900.0 MiB free of 79.6 GiB with no fault, unattributed memory, other tenant, " +
			"fragmentation, ramp or capacity loss; the request of 0 B failed with 900.0 MiB reported free."
		if r.Cause != CauseUnknown || r.Evidence != want {
			t.Fatalf("got %s:\n%q\nwant\n%q", r.Cause, r.Evidence, want)
		}
	})
}

package window

import (
	"testing"
	"time"
)

// TestReadingsTo: the free series and the pid's, between the bounds, into reused arrays; a
// point counts as in a collection within presenceSlack.
func TestReadingsTo(t *testing.T) {
	s := New(Config{Window: time.Hour})
	key := GPUKey{Host: "n", HWID: "GPU-0"}
	base := time.Unix(1_700_000_000, 0)
	for i := 0; i < 10; i++ {
		at := base.Add(time.Duration(i) * time.Second).UnixNano()
		samples := []Sample{{Kind: Free, T: at, V: int64(100 - i)}}
		if i < 5 || i > 7 { // pid 7 is not listed from second 5 to 7
			samples = append(samples, Sample{Kind: ProcessBytes, T: at + 2e8, V: int64(i), Process: ProcessInfo{PID: 7}})
		}
		s.Observe(key, GPUInfo{Index: -1}, samples)
	}
	var r Readings
	if s.ReadingsTo(&r, "n", "GPU-1", 7, base, base.Add(time.Minute)) {
		t.Fatal("no such GPU")
	}
	if !s.ReadingsTo(&r, "n", "GPU-0", 7, base.Add(2*time.Second), base.Add(8500*time.Millisecond)) {
		t.Fatal("GPU-0 not found")
	}
	if len(r.Free) != 7 || r.Free[0].V != 98 || len(r.Process) != 4 {
		t.Fatalf("free %v, process %v", r.Free, r.Process)
	}
	for i, want := range []bool{true, true, true, false, false, false, true} {
		at := base.Add(time.Duration(2+i) * time.Second).UnixNano()
		if _, ok := Present(r.Process, at); ok != want {
			t.Errorf("second %d: present %v", 2+i, ok)
		}
	}
	arr := &r.Free[0]
	s.ReadingsTo(&r, "n", "GPU-0", -1, base, base.Add(3*time.Second))
	if &r.Free[0] != arr || len(r.Process) != 0 {
		t.Errorf("arrays not reused, or a process for pid -1")
	}
}

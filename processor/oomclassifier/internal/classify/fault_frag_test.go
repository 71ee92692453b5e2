package classify

import (
	"testing"
	"time"
)

// TestGPUFaultWindow: a fault Xid counts from xid_before before the OOM to xid_after after
// it, both ends included; the evidence names the nearest (the first listed on a tie), says
// on which side of the OOM it was, and how many fault Xids were near.
func TestGPUFaultWindow(t *testing.T) {
	th := DefaultThresholds() // 5 min before, 1 min after
	x := func(d time.Duration, code int) XidEvent {
		return XidEvent{T: oomTime.Add(d), Code: code, Fault: true}
	}
	const tail = ": the failure is a GPU or application fault, not a capacity problem"
	tests := []struct {
		name     string
		xids     []XidEvent
		noTime   bool   // the OOM record had no timestamp
		evidence string // "" = must not hold
		complete bool
	}{
		{name: "exactly xid_before before", xids: []XidEvent{x(-th.XidBefore, 79)},
			evidence: "GPU-5a8e1c2d… reported Xid 79 5m0s before the OOM" + tail, complete: true},
		{name: "just beyond xid_before", xids: []XidEvent{x(-th.XidBefore-time.Nanosecond, 79)}},
		{name: "exactly xid_after after", xids: []XidEvent{x(th.XidAfter, 48)},
			evidence: "GPU-5a8e1c2d… reported Xid 48 1m0s after the OOM" + tail, complete: true},
		{name: "just beyond xid_after", xids: []XidEvent{x(th.XidAfter+time.Nanosecond, 48)}},
		{name: "at the OOM's instant", xids: []XidEvent{x(0, 79)},
			evidence: "GPU-5a8e1c2d… reported Xid 79 0s before the OOM" + tail, complete: true},
		{name: "the nearest of several, one after", xids: []XidEvent{x(-30*time.Second, 79), x(2500*time.Millisecond, 48), x(-4*time.Minute, 63)},
			evidence: "GPU-5a8e1c2d… reported Xid 48 2.5s after the OOM, one of 3 fault Xids near it" + tail, complete: true},
		{name: "a tie goes to the first listed", xids: []XidEvent{x(-10*time.Second, 79), x(10*time.Second, 48)},
			evidence: "GPU-5a8e1c2d… reported Xid 79 10s before the OOM, one of 2 fault Xids near it" + tail, complete: true},
		{name: "without an OOM time every fault Xid of the window counts", xids: []XidEvent{x(-time.Hour, 79)}, noTime: true,
			evidence: "GPU-5a8e1c2d… reported Xid 79" + tail, complete: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gpuWith(0, proc(100, "python", "aaaa", 60*gib))
			g.Xids = append(tt.xids, XidEvent{T: oomTime, Code: 31, Fault: false}) // informational: never counted
			o := pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib)
			if tt.noTime {
				o.Time = time.Time{}
			}
			v := ruleGPUFault(newFacts(o, g, &th))
			if v.holds != (tt.evidence != "") || v.evidence != tt.evidence || v.complete != tt.complete {
				t.Fatalf("got holds=%v complete=%v %q\nwant complete=%v %q", v.holds, v.complete, v.evidence, tt.complete, tt.evidence)
			}
		})
	}
}

func TestAbsDuration(t *testing.T) {
	for _, tt := range []struct{ in, want time.Duration }{
		{-5 * time.Second, 5 * time.Second},
		{5 * time.Second, 5 * time.Second},
		{0, 0},
		{minDuration, maxDuration}, // -minDuration overflows back to itself
		{minDuration + 1, maxDuration},
	} {
		if got := absDuration(tt.in); got != tt.want {
			t.Errorf("absDuration(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestFragmentationBounds: reserved − allocated ≥ max(request, fragmentation_min_fraction ×
// reserved, fragmentation_min_bytes), each bound included; the message alone decides, and
// completely only with a request size.
func TestFragmentationBounds(t *testing.T) {
	tests := []struct {
		name                 string
		req, alloc, reserved int64
		holds, complete      bool
		evidence             string
	}{
		// fraction 0.25 of 8 GiB is 2 GiB.
		{name: "gap exactly the fraction", req: gib, alloc: 6 * gib, reserved: 8 * gib, holds: true, complete: true,
			evidence: "The allocator held 8.0 GiB reserved but only 6.0 GiB allocated: 2.0 GiB (25.0% of reserved) was free inside it yet not in one piece for the 1.0 GiB request"},
		{name: "gap one byte below the fraction", req: gib, alloc: 6*gib + 1, reserved: 8 * gib},
		// 0.25 × 512 MiB is 128 MiB: the 256 MiB floor decides.
		{name: "gap exactly the byte floor", req: 100 * mib, alloc: 256 * mib, reserved: 512 * mib, holds: true, complete: true,
			evidence: "The allocator held 512.0 MiB reserved but only 256.0 MiB allocated: 256.0 MiB (50.0% of reserved) was free inside it yet not in one piece for the 100.0 MiB request"},
		{name: "gap one byte below the byte floor", req: 100 * mib, alloc: 256*mib + 1, reserved: 512 * mib},
		{name: "gap exactly the request", req: 10 * gib, alloc: 10 * gib, reserved: 20 * gib, holds: true, complete: true,
			evidence: "The allocator held 20.0 GiB reserved but only 10.0 GiB allocated: 10.0 GiB (50.0% of reserved) was free inside it yet not in one piece for the 10.0 GiB request"},
		{name: "gap one byte below the request", req: 10*gib + 1, alloc: 10 * gib, reserved: 20 * gib},
		{name: "nothing allocated", req: gib, alloc: 0, reserved: 4 * gib, holds: true, complete: true,
			evidence: "The allocator held 4.0 GiB reserved but only 0 B allocated: 4.0 GiB (100.0% of reserved) was free inside it yet not in one piece for the 1.0 GiB request"},
		{name: "no request size", req: -1, alloc: 6 * gib, reserved: 8 * gib, holds: true, complete: false,
			evidence: "The allocator held 8.0 GiB reserved but only 6.0 GiB allocated: 2.0 GiB (25.0% of reserved) was free inside it yet not in one piece"},
		{name: "a zero request is no request size", req: 0, alloc: 6 * gib, reserved: 8 * gib, holds: true, complete: false,
			evidence: "The allocator held 8.0 GiB reserved but only 6.0 GiB allocated: 2.0 GiB (25.0% of reserved) was free inside it yet not in one piece"},
		{name: "allocated equals reserved", req: gib, alloc: 8 * gib, reserved: 8 * gib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			th.FragMinFraction = 0.25
			v := ruleFragmentation(newFacts(pytorchOOM(tt.req, 100*mib, tt.alloc, tt.reserved), nil, &th))
			if v.holds != tt.holds || v.complete != tt.complete || v.evidence != tt.evidence {
				t.Fatalf("got holds=%v complete=%v\n  %q\nwant holds=%v complete=%v\n  %q", v.holds, v.complete, v.evidence, tt.holds, tt.complete, tt.evidence)
			}
			if v.holds && (!v.fromMessage || v.explains != tt.reserved-tt.alloc) {
				t.Errorf("fromMessage=%v explains=%d, want true %d", v.fromMessage, v.explains, tt.reserved-tt.alloc)
			}
		})
	}
}

package classify

import (
	"strings"
	"testing"
)

// TestOtherTenantBounds: memory outside the failing workload counts as another tenant when
// it is at least tenant_min_fraction × total ("large"), or at least the request and
// tenant_min_bytes ("blocking": without it the request would have fit), each bound
// included. Each case turns one of the two off to test the other alone.
func TestOtherTenantBounds(t *testing.T) {
	const quarter = h100Total / 4 // exact: 81559 MiB is a multiple of 4 bytes
	tests := []struct {
		name     string
		tenant   int64   // pid 4242's bytes, in another container
		req      int64   // the request
		fraction float64 // tenant_min_fraction
		minBytes int64   // tenant_min_bytes
		free     int64   // the free memory at the failure, -1 unknown
		holds    bool
	}{
		{name: "large: exactly the fraction", tenant: quarter, req: 100 * gib, fraction: 0.25, minBytes: 100 * gib, free: 900 * mib, holds: true},
		{name: "large: one byte below", tenant: quarter - 1, req: 100 * gib, fraction: 0.25, minBytes: 100 * gib, free: 900 * mib},
		{name: "blocking: exactly the request", tenant: 3 * gib, req: 3 * gib, fraction: 1, minBytes: gib, free: 900 * mib, holds: true},
		{name: "blocking: one byte below the request", tenant: 3*gib - 1, req: 3 * gib, fraction: 1, minBytes: gib, free: 900 * mib},
		{name: "blocking: exactly tenant_min_bytes", tenant: gib, req: 100 * mib, fraction: 1, minBytes: gib, free: 900 * mib, holds: true},
		{name: "blocking: one byte below tenant_min_bytes", tenant: gib - 1, req: 100 * mib, fraction: 1, minBytes: gib, free: 900 * mib},
		{name: "blocking needs a request size", tenant: 3 * gib, req: 0, fraction: 1, minBytes: gib, free: 900 * mib},
		{name: "blocking: nothing free, exactly the request", tenant: 3 * gib, req: 3 * gib, fraction: 1, minBytes: gib, free: 0, holds: true},
		{name: "blocking: free unknown, exactly the request", tenant: 3 * gib, req: 3 * gib, fraction: 1, minBytes: gib, free: -1, holds: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			th.TenantMinFraction, th.TenantMinBytes = tt.fraction, tt.minBytes
			g := gpuWith(0, proc(100, "python", "aaaa", 40*gib), proc(4242, "python", "bbbb", tt.tenant))
			g.Free = -1 // the message's free decides
			o := pytorchOOM(tt.req, tt.free, 39*gib, 39*gib+500*mib)
			v := ruleOtherTenant(newFacts(o, g, &th))
			if v.holds != tt.holds {
				t.Fatalf("holds=%v, want %v: %s", v.holds, tt.holds, v.evidence)
			}
			if v.holds && (v.explains != tt.tenant || !v.complete) {
				t.Errorf("explains=%d complete=%v, want %d true", v.explains, v.complete, tt.tenant)
			}
		})
	}
}

// TestOtherTenantEvidence: the evidence counts the processes outside the failing workload
// (a process holding nothing is none), sums them and names the largest (the first listed on
// a tie).
func TestOtherTenantEvidence(t *testing.T) {
	const tail = "; the request of 2.0 GiB needed 1.1 GiB more than the 900.0 MiB free"
	tests := []struct {
		name    string
		outside []Process
		want    string
	}{
		{name: "one tenant beside one holding nothing",
			outside: []Process{proc(4242, "vllm", "bbbb", 9*gib), proc(4243, "idle", "cccc", 0)},
			want:    "GPU-5a8e1c2d… had 9.0 GiB (11.3% of 79.6 GiB) used by pid 4242 (vllm, container bbbb) outside the failing container" + tail},
		{name: "three tenants",
			outside: []Process{proc(301, "a", "bbbb", 4*gib), proc(302, "b", "cccc", 9*gib), proc(303, "c", "dddd", 6*gib)},
			want: "GPU-5a8e1c2d… had 19.0 GiB (23.9% of 79.6 GiB) used by 3 processes outside the failing container, " +
				"the largest pid 302 (b, container cccc) with 9.0 GiB" + tail},
		{name: "two tenants of one size",
			outside: []Process{proc(301, "a", "bbbb", 6*gib), proc(302, "b", "cccc", 6*gib)},
			want: "GPU-5a8e1c2d… had 12.0 GiB (15.1% of 79.6 GiB) used by 2 processes outside the failing container, " +
				"the largest pid 301 (a, container bbbb) with 6.0 GiB" + tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			g := gpuWith(0, append([]Process{proc(100, "python", "aaaa", 50*gib)}, tt.outside...)...)
			v := ruleOtherTenant(newFacts(pytorchOOM(2*gib, 900*mib, 49*gib, 49*gib+500*mib), g, &th))
			if !v.holds || v.evidence != tt.want {
				t.Fatalf("holds=%v\n  %q\nwant\n  %q", v.holds, v.evidence, tt.want)
			}
		})
	}
}

// TestLargestWorkloadIsAssumedFailing: with the failing process unknown, the workload
// holding the most memory in all (not the largest single process) is taken for it, the
// first listed on a tie, and the rest is the other tenant.
func TestLargestWorkloadIsAssumedFailing(t *testing.T) {
	for _, tt := range []struct {
		name string
		ps   []Process
		want string
	}{
		{"two processes beat one larger", []Process{proc(100, "python", "aaaa", 30*gib),
			proc(200, "python", "bbbb", 20*gib), proc(201, "python", "bbbb", 15*gib)},
			"had 30.0 GiB (37.7% of 79.6 GiB) used by pid 100 (python, container aaaa) outside the largest workload"},
		{"a tie", []Process{proc(100, "python", "aaaa", 30*gib), proc(200, "python", "bbbb", 30*gib)},
			"had 30.0 GiB (37.7% of 79.6 GiB) used by pid 200 (python, container bbbb) outside the largest workload"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := pytorchOOM(2*gib, 900*mib, 29*gib, 29*gib+500*mib)
			o.PID = -1
			th := DefaultThresholds()
			v := ruleOtherTenant(newFacts(o, gpuWith(0, tt.ps...), &th))
			if !v.holds || v.complete || !strings.Contains(v.evidence, tt.want) {
				t.Fatalf("holds=%v complete=%v: %s\nwant %q", v.holds, v.complete, v.evidence, tt.want)
			}
		})
	}
}

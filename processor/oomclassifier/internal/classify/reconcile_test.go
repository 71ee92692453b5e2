package classify

import (
	"strings"
	"testing"
)

// podProc is a process of a pod, with the names the receiver's PodResources join gives it.
func podProc(pid int, uid, ns, pod string, bytes int64) Process {
	p := proc(pid, "python", "", bytes)
	p.PodUID, p.Namespace, p.PodName, p.Container = uid, ns, pod, "main"
	return p
}

func alloc(uid, ns, pod, device, resource string) Allocation {
	return Allocation{PodUID: uid, Namespace: ns, PodName: pod, Container: "main", DeviceID: device, Resource: resource}
}

// TestOtherTenantReconciliation: with the kubelet's allocations of the GPU in the window, the
// other_tenant evidence says whether the tenant was scheduled there; without them it says
// nothing about scheduling.
func TestOtherTenantReconciliation(t *testing.T) {
	failing := podProc(100, "uid-a", "ml", "trainer-a", 40*gib)
	tenant := podProc(4242, "uid-b", "ml", "server-b", 35*gib)
	bare := proc(4242, "miner", "", 35*gib)
	tests := []struct {
		name   string
		tenant Process
		allocs []Allocation
		want   string // in the evidence; "" = no scheduling clause
	}{
		{"no allocation data", tenant, nil, ""},
		{"time-sliced: both pods allocated a replica", tenant, []Allocation{
			alloc("uid-a", "ml", "trainer-a", "GPU-5a8e::0", "nvidia.com/gpu.shared"),
			alloc("uid-b", "ml", "server-b", "GPU-5a8e::1", "nvidia.com/gpu.shared")},
			"the kubelet allocated this GPU to its pod ml/server-b (GPU-5a8e::1): it was scheduled to share this GPU (time-slicing, nvidia.com/gpu.shared)"},
		{"tenant's pod not allocated it", tenant, []Allocation{alloc("uid-a", "ml", "trainer-a", "GPU-5a8e", "nvidia.com/gpu")},
			"the kubelet did not allocate this GPU to its pod ml/server-b but to pod ml/trainer-a: an unexpected consumer, not scheduled here"},
		{"tenant in no pod", bare, []Allocation{alloc("uid-a", "ml", "trainer-a", "GPU-5a8e", "nvidia.com/gpu")},
			"that process belongs to no pod while the kubelet allocated this GPU to pod ml/trainer-a: an unexpected consumer, not scheduled here"},
		{"allocation by name only (no uid from PodResources)", tenant, []Allocation{
			alloc("", "ml", "trainer-a", "GPU-5a8e::0", "nvidia.com/gpu.shared"),
			alloc("", "ml", "server-b", "GPU-5a8e::1", "nvidia.com/gpu.shared")},
			"allocated this GPU to its pod ml/server-b (GPU-5a8e::1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gpuWith(0, failing, tt.tenant)
			g.Allocations = tt.allocs
			r := Classify(pytorchOOM(4*gib, 900*mib, 39*gib, 39*gib+500*mib), g, DefaultThresholds())
			if r.Cause != CauseOtherTenant {
				t.Fatalf("cause %s: %s", r.Cause, r.Evidence)
			}
			if tt.want == "" {
				if strings.Contains(r.Evidence, "kubelet") {
					t.Fatalf("scheduling claimed without allocation data: %s", r.Evidence)
				}
				return
			}
			if !strings.Contains(r.Evidence, tt.want) {
				t.Fatalf("evidence %q\nlacks %q", r.Evidence, tt.want)
			}
		})
	}
}

// TestMatchConfidenceCaps: the match's limit lowers the grade; a verdict from the message
// alone keeps medium under a low limit, as it does without a GPU.
func TestMatchConfidenceCaps(t *testing.T) {
	oom := pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib)
	for _, tt := range []struct {
		by, limit, want string
	}{
		{MatchedByPod, "", ConfidenceHigh},
		{MatchedByVPID, "", ConfidenceHigh},
		{MatchedByContainer, "", ConfidenceHigh},
		{MatchedByPodOrdinal, "", ConfidenceHigh},
		{MatchedByPodOrdinal, ConfidenceMedium, ConfidenceMedium},
		{MatchedByNodeOrdinal, "", ConfidenceMedium},
		{MatchedByNodeOrdinal, ConfidenceLow, ConfidenceLow},
	} {
		g := gpuWith(0, proc(100, "python", "aaaa", 60*gib), proc(4242, "python", "bbbb", 18*gib))
		g.MatchedBy, g.MatchConfidence = tt.by, tt.limit
		if r := Classify(oom, g, DefaultThresholds()); r.Confidence != tt.want {
			t.Errorf("%s limited to %q: %s, want %s (%s)", tt.by, tt.limit, r.Confidence, tt.want, r.Evidence)
		}
	}
}

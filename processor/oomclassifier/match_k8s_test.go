package oomclassifier

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

const gpu40 = 40 * gib

// fourPodNode is a 4-GPU node with one pod per GPU, as the DaemonSet's shape: GPU 1 is
// squeezed by a process of a pod the kubelet did not give it, GPU 2's pod leaks.
func fourPodNode() []kgpu {
	intruder := kpod{uid: "uid-x", ns: "other", name: "miner-0", container: "main", cid: "cfeed"}
	leak := func(s int) int64 { return 10*gib + int64(s)*80<<20 }
	gs := make([]kgpu, 4)
	for i := range gs {
		gs[i] = kgpu{hwID: "GPU-" + string(rune('0'+i)), bus: "00000000:" + string(rune('1'+i)) + "0:00.0",
			model: "NVIDIA A100-SXM4-40GB", index: int64(i), total: gpu40,
			procs:  []kproc{{pid: int64(5000 + i), vpid: 1, pod: podOf(i), bytes: flatBytes(36 * gib)}},
			allocs: []kalloc{{pod: podOf(i), device: "GPU-" + string(rune('0'+i)), resource: "nvidia.com/gpu"}}}
	}
	gs[1].procs[0].bytes = flatBytes(20 * gib)
	gs[1].procs = append(gs[1].procs, kproc{pid: 6001, pod: intruder, bytes: flatBytes(17 * gib)})
	gs[2].procs[0].bytes = leak
	return gs
}

// TestFourPodsEachSayGPU0: every pod's OOM says "GPU 0" and carries only its pod (CRI
// file_log shape); each is matched to its own pod's GPU and classified from that GPU's
// metrics. Matched by the node ordinal, all four went to GPU-0.
func TestFourPodsEachSayGPU0(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedNode(t, p, "node1", 300, fourPodNode()...)
	at := t0.Add(299 * time.Second)
	full := torchOOM(0, 4, 3.4, 36, 35, 35.5)
	for i, tc := range []struct {
		msg, cause, evidence string
	}{
		{full, classify.CauseWorkloadTooLarge, ""},
		{torchOOM(0, 4, 2.4, 20, 19, 19.5), classify.CauseOtherTenant,
			"the kubelet did not allocate this GPU to its pod other/miner-0 but to pod ml/trainer-1: an unexpected consumer, not scheduled here"},
		{torchOOM(0, 8, 6, 33.4, 32, 33), classify.CauseMemoryLeak, "grew"},
		{full, classify.CauseWorkloadTooLarge, ""},
	} {
		a := classified(t, p, podLogs("node1", at, podOf(i), tc.msg))
		gpu := "GPU-" + string(rune('0'+i))
		assert.Equal(t, gpu, a[attrHWID], "pod %d: %v", i, a[attrEvidence])
		assert.Equal(t, "pod", a[attrMatch])
		assert.Equal(t, tc.cause, a[attrCause], "pod %d: %v", i, a[attrEvidence])
		assert.Contains(t, a[attrEvidence], tc.evidence)
		assert.Contains(t, a[attrEvidence], "Matched to "+gpu+" as the only GPU the processes of pod ml/trainer-"+string(rune('0'+i))+" held.")
	}
}

// TestInPodPIDIsMatchedAsVPID: an SDK inside the pod logs its own pid 1.
func TestInPodPIDIsMatchedAsVPID(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedNode(t, p, "node1", 300, fourPodNode()...)
	ld := podLogs("node1", t0.Add(299*time.Second), podOf(2), torchOOM(0, 8, 6, 33.4, 32, 33))
	firstRecord(ld).Attributes().PutInt(attrProcessPID, 1)
	a := classified(t, p, ld)
	assert.Equal(t, "GPU-2", a[attrHWID])
	assert.Equal(t, "vpid", a[attrMatch])
	assert.Equal(t, classify.CauseMemoryLeak, a[attrCause], a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "pid 5002", "the failing process found by its host pid")
	assert.Contains(t, a[attrEvidence], "Matched to GPU-2 by pid 1 inside pod ml/trainer-2 (process.vpid of host pid 5002).")
}

// TestDockerJSONLogsByContainerID: Docker's json logs give the container id alone.
func TestDockerJSONLogsByContainerID(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedNode(t, p, "node1", 60, fourPodNode()...)
	ld := logsWith("node1", t0.Add(59*time.Second), text(torchOOM(0, 4, 3.4, 36, 35, 35.5)))
	ld.ResourceLogs().At(0).Resource().Attributes().PutStr(attrContainerID, podOf(3).cid)
	a := classified(t, p, ld)
	assert.Equal(t, "GPU-3", a[attrHWID])
	assert.Equal(t, "container", a[attrMatch])
	assert.Contains(t, a[attrEvidence], "Matched to GPU-3 as the only GPU the processes of container c30ffee0ffee… (pod ml/trainer-3) held.")
}

// TestUnknownPodFallsThroughToNodeOrdinal: the pod is not in the window; the node ordinal is
// taken, at low confidence, and the evidence says it could not be checked.
func TestUnknownPodFallsThroughToNodeOrdinal(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedNode(t, p, "node1", 60, fourPodNode()...)
	ghost := kpod{uid: "uid-9", ns: "ml", name: "ghost-9", container: "main"}
	a := classified(t, p, podLogs("node1", t0.Add(59*time.Second), ghost, torchOOM(0, 4, 3.4, 36, 35, 35.5)))
	assert.Equal(t, "GPU-0", a[attrHWID])
	assert.Equal(t, "node_ordinal", a[attrMatch])
	assert.Equal(t, classify.ConfidenceLow, a[attrConfidence])
	assert.Contains(t, a[attrEvidence], "Pod ml/ghost-9 was not found in the window")
	assert.Contains(t, a[attrEvidence], "which could not be checked against the pod")
}

// TestRecordWithoutPodIsMatchedAsBefore: a bare record keeps today's match and evidence.
func TestRecordWithoutPodIsMatchedAsBefore(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedNode(t, p, "node1", 60, fourPodNode()...)
	a := classified(t, p, logsWith("node1", t0.Add(59*time.Second), text(torchOOM(1, 4, 3.4, 36, 35, 35.5))))
	assert.Equal(t, "GPU-1", a[attrHWID])
	assert.Equal(t, "node_ordinal", a[attrMatch])
	assert.NotContains(t, a[attrEvidence], "Matched to")
	assert.NotEqual(t, classify.ConfidenceLow, a[attrConfidence])

	ld := logsWith("node1", t0.Add(59*time.Second), text(torchOOM(0, 4, 3.4, 36, 35, 35.5)))
	firstRecord(ld).Attributes().PutInt(attrProcessPID, 5003)
	a = classified(t, p, ld)
	assert.Equal(t, "GPU-3", a[attrHWID])
	assert.Equal(t, "pid", a[attrMatch])
	assert.NotContains(t, a[attrEvidence], "Matched to")

	a = classified(t, p, logsWith("node9", t0.Add(59*time.Second), text(torchOOM(0, 4, 3.4, 36, 35, 35.5))))
	assert.Equal(t, "none", a[attrMatch])
	assert.NotContains(t, a, attrHWID)
}

// TestPodWithTwoGPUsSaysGPU1: the message's GPU 1 is the pod's second GPU in PCI bus order
// (identical models), which is neither its second by UUID nor the node's GPU 1.
func TestPodWithTwoGPUsSaysGPU1(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	wide := kpod{uid: "uid-w", ns: "ml", name: "wide-0", container: "main"}
	other := podOf(7)
	proc := func(pod kpod, pid int64, b int64) []kproc {
		return []kproc{{pid: pid, vpid: 1, pod: pod, bytes: flatBytes(b)}}
	}
	feedNode(t, p, "node2", 60,
		kgpu{hwID: "GPU-c", bus: "00000000:20:00.0", model: "NVIDIA A100-SXM4-40GB", index: 0, total: gpu40, procs: proc(other, 8000, 10*gib)},
		kgpu{hwID: "GPU-b", bus: "00000000:30:00.0", model: "NVIDIA A100-SXM4-40GB", index: 1, total: gpu40, procs: proc(wide, 7000, 20*gib)},
		kgpu{hwID: "GPU-a", bus: "00000000:40:00.0", model: "NVIDIA A100-SXM4-40GB", index: 2, total: gpu40, procs: proc(wide, 7001, 36*gib)},
	)
	a := classified(t, p, podLogs("node2", t0.Add(59*time.Second), wide, torchOOM(1, 4, 3.4, 36, 35, 35.5)))
	assert.Equal(t, "GPU-a", a[attrHWID])
	assert.Equal(t, "pod_ordinal", a[attrMatch])
	assert.Equal(t, classify.ConfidenceHigh, a[attrConfidence], a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "Matched to GPU-a as GPU 1 of pod ml/wide-0's 2 GPUs in CUDA's order (identical NVIDIA A100-SXM4-40GB, so PCI bus order).")

	a = classified(t, p, podLogs("node2", t0.Add(59*time.Second), wide, torchOOM(5, 4, 3.4, 36, 35, 35.5)))
	assert.Equal(t, "none", a[attrMatch], "an ordinal beyond the pod and the node matches nothing")
	assert.Contains(t, a[attrEvidence], "The message's GPU 5 is beyond the 2 GPUs of pod ml/wide-0.")
}

// TestPodOverMixedModelsLowersConfidence: bus order is taken, but CUDA's fastest-first order
// among different models could not be checked.
func TestPodOverMixedModelsLowersConfidence(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	mix := kpod{uid: "uid-m", ns: "ml", name: "mix-0", container: "main"}
	feedNode(t, p, "node3", 60,
		kgpu{hwID: "GPU-l", bus: "00000000:10:00.0", model: "NVIDIA L4", index: 0, total: 24 * gib,
			procs: []kproc{{pid: 9000, pod: mix, bytes: flatBytes(10 * gib)}}},
		kgpu{hwID: "GPU-h", bus: "00000000:20:00.0", model: "NVIDIA A100-SXM4-40GB", index: 1, total: gpu40,
			procs: []kproc{{pid: 9001, pod: mix, bytes: flatBytes(36 * gib)}}},
	)
	a := classified(t, p, podLogs("node3", t0.Add(59*time.Second), mix, torchOOM(1, 4, 3.4, 36, 35, 35.5)))
	assert.Equal(t, "GPU-h", a[attrHWID])
	assert.Equal(t, "pod_ordinal", a[attrMatch])
	assert.Equal(t, classify.ConfidenceMedium, a[attrConfidence], a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "in PCI bus order; the GPUs are of different models, so CUDA's default order (fastest first) could not be checked.")
}

// TestAllocationBeforeAnyProcess: the pod failed while starting, before NVML listed a
// process of it; the kubelet's allocation names its GPU. MIG: the allocation is the MIG
// instance's own resource, and that is the GPU matched.
func TestAllocationBeforeAnyProcess(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	fresh, mig, busy := kpod{uid: "uid-f", ns: "ml", name: "fresh-0", container: "main"},
		kpod{uid: "uid-g", ns: "ml", name: "mig-0", container: "main"}, podOf(4)
	feedNode(t, p, "node4", 60,
		kgpu{hwID: "GPU-p", bus: "00000000:10:00.0", model: "NVIDIA A100-SXM4-40GB", index: 0, total: gpu40,
			procs: []kproc{{pid: 100, pod: busy, bytes: flatBytes(10 * gib)}}, allocs: []kalloc{{pod: busy, device: "GPU-p", resource: "nvidia.com/gpu"}}},
		kgpu{hwID: "GPU-q", bus: "00000000:20:00.0", model: "NVIDIA A100-SXM4-40GB", index: 1, total: gpu40,
			allocs: []kalloc{{pod: fresh, device: "GPU-q", resource: "nvidia.com/gpu"}}},
		kgpu{hwID: "MIG-1", bus: "00000000:30:00.0", model: "NVIDIA A100-SXM4-40GB", index: 2, total: 10 * gib,
			procs: []kproc{{pid: 200, pod: podOf(5), bytes: flatBytes(5 * gib)}}},
		kgpu{hwID: "MIG-2", bus: "00000000:30:00.0", model: "NVIDIA A100-SXM4-40GB", index: 2, total: 10 * gib,
			allocs: []kalloc{{pod: mig, device: "MIG-2", resource: "nvidia.com/mig-1g.10gb"}}},
	)
	a := classified(t, p, podLogs("node4", t0.Add(59*time.Second), fresh, torchOOM(0, 40, 39.4, 0.5, 0, 0)))
	assert.Equal(t, "GPU-q", a[attrHWID])
	assert.Equal(t, "pod", a[attrMatch])
	assert.Contains(t, a[attrEvidence], "Matched to GPU-q as the only GPU the kubelet allocated to pod ml/fresh-0 (GPU-q, nvidia.com/gpu); no process of the pod was listed on it yet.")

	a = classified(t, p, podLogs("node4", t0.Add(59*time.Second), mig, torchOOM(0, 12, 9.4, 0.5, 0, 0)))
	assert.Equal(t, "MIG-2", a[attrHWID])
	assert.Equal(t, "pod", a[attrMatch])
	assert.Contains(t, a[attrEvidence], "(MIG-2, nvidia.com/mig-1g.10gb)")
}

// TestTimeSlicedTenantWasScheduled: two pods were allocated replicas of one GPU; the other
// pod's memory is other_tenant, and the evidence says the kubelet put it there.
func TestTimeSlicedTenantWasScheduled(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	pa, pb := podOf(1), kpod{uid: "uid-s", ns: "serve", name: "api-0", container: "server"}
	feedNode(t, p, "node5", 60,
		kgpu{hwID: "GPU-t", bus: "00000000:10:00.0", model: "NVIDIA A100-SXM4-40GB", index: 0, total: gpu40,
			procs:  []kproc{{pid: 300, pod: pa, bytes: flatBytes(20 * gib)}, {pid: 301, pod: pb, bytes: flatBytes(17 * gib)}},
			allocs: []kalloc{{pod: pa, device: "GPU-t::0", resource: "nvidia.com/gpu.shared"}, {pod: pb, device: "GPU-t::1", resource: "nvidia.com/gpu.shared"}}},
		kgpu{hwID: "GPU-u", bus: "00000000:20:00.0", model: "NVIDIA A100-SXM4-40GB", index: 1, total: gpu40},
	)
	a := classified(t, p, podLogs("node5", t0.Add(59*time.Second), pa, torchOOM(0, 4, 2.4, 20, 19, 19.5)))
	assert.Equal(t, "GPU-t", a[attrHWID])
	assert.Equal(t, classify.CauseOtherTenant, a[attrCause], a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "the kubelet allocated this GPU to its pod serve/api-0 (GPU-t::1): it was scheduled to share this GPU (time-slicing, nvidia.com/gpu.shared)")
}

// TestWorkloadPeakInEvidence: another pod of the same Deployment ran on this host; the OOM's
// evidence cites its peak and how far the failing process went beyond it.
func TestWorkloadPeakInEvidence(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	failing := kpod{uid: "uid-1", ns: "ml", name: "trainer-7d4b9c8f6-x2k9q", container: "main"}
	sibling := kpod{uid: "uid-2", ns: "ml", name: "trainer-7d4b9c8f6-bcdfg", container: "main"}
	feedNode(t, p, "node7", 60,
		kgpu{hwID: "GPU-w1", bus: "00000000:10:00.0", model: "NVIDIA A100-SXM4-40GB", index: 0, total: gpu40,
			procs: []kproc{{pid: 400, pod: failing, bytes: flatBytes(36 * gib)}}},
		kgpu{hwID: "GPU-w2", bus: "00000000:20:00.0", model: "NVIDIA A100-SXM4-40GB", index: 1, total: gpu40,
			procs: []kproc{{pid: 401, pod: sibling, bytes: func(s int) int64 { return 28*gib + int64(s%3)*gib }}}},
	)
	a := classified(t, p, podLogs("node7", t0.Add(59*time.Second), failing, torchOOM(0, 4, 3.4, 36, 35, 35.5)))
	assert.Contains(t, a[attrEvidence], "Workload ml/trainer/main (1 other pod on this host) peaked at 30.0 GiB per process in the window (pod trainer-7d4b9c8f6-bcdfg); the failing process held 36.0 GiB at the OOM, 20% above that peak.")
}

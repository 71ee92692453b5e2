package window

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// k8sGPU is one GPU of a Kubernetes node: its resource, its processes and its allocations.
type k8sGPU struct {
	hwID, bus, model string
	index            int
	procs            []ProcessInfo // each holds 10 GiB
	allocs           []Allocation
}

// observeNode sends n per-second collections of the GPUs.
func observeNode(s *Store, n int, gpus ...k8sGPU) {
	for i := 0; i < n; i++ {
		for _, g := range gpus {
			ss := scrape(sec(i), 20, nil)
			for _, p := range g.procs {
				ss = append(ss, Sample{Kind: ProcessBytes, T: sec(i), V: 10 * gib, Process: p})
			}
			info := GPUInfo{Name: g.model, BusID: g.bus, Index: g.index}
			s.Observe(GPUKey{Host: "h", HWID: g.hwID}, info, ss)
			var as []AllocationPoint
			for _, a := range g.allocs {
				as = append(as, AllocationPoint{T: sec(i), Allocation: a})
			}
			if len(as) > 0 {
				s.ObserveAllocations(GPUKey{Host: "h", HWID: g.hwID}, info, as)
			}
		}
	}
}

func podProc(pid, vpid int, uid, pod, containerID string) ProcessInfo {
	return ProcessInfo{PID: pid, VPID: vpid, Name: "python", PodUID: uid, Namespace: "ml", PodName: pod,
		Container: "main", ContainerID: containerID, Type: "compute"}
}

func podAlloc(uid, pod, device, resource string) Allocation {
	return Allocation{PodUID: uid, Namespace: "ml", PodName: pod, Container: "main", DeviceID: device, Resource: resource}
}

const a100 = "NVIDIA A100-SXM4-40GB"

// k8sNodeStore is a node with one pod per GPU (a, b), a pod with two GPUs whose UUID order
// is not their bus order (c, d), a MIG instance allocated to a pod with no process yet (e),
// and GPU a time-sliced to a second pod that has not started a process.
func k8sNodeStore() *Store {
	s := New(testConfig())
	observeNode(s, 30,
		k8sGPU{hwID: "GPU-a", bus: "00000000:10:00.0", model: a100, index: 0,
			procs:  []ProcessInfo{podProc(1000, 1, "uid-0", "trainer-0", "c0c0c0c0c0c0c0c0")},
			allocs: []Allocation{podAlloc("uid-0", "trainer-0", "GPU-a::0", "nvidia.com/gpu.shared"), podAlloc("uid-5", "late-5", "GPU-a::1", "nvidia.com/gpu.shared")}},
		k8sGPU{hwID: "GPU-b", bus: "00000000:20:00.0", model: a100, index: 1,
			procs: []ProcessInfo{podProc(1001, 1, "uid-1", "trainer-1", "c1c1c1c1c1c1c1c1")}},
		k8sGPU{hwID: "GPU-c", bus: "00000000:40:00.0", model: a100, index: 3,
			procs: []ProcessInfo{podProc(1003, 8, "uid-2", "wide-2", "c2c2c2c2c2c2c2c2")}},
		k8sGPU{hwID: "GPU-d", bus: "00000000:30:00.0", model: a100, index: 2,
			procs: []ProcessInfo{podProc(1002, 7, "uid-2", "wide-2", "c2c2c2c2c2c2c2c2")}},
		k8sGPU{hwID: "MIG-e", bus: "00000000:50:00.0", model: a100, index: 4,
			allocs: []Allocation{podAlloc("uid-4", "mig-4", "MIG-e", "nvidia.com/mig-1g.10gb")}},
	)
	return s
}

func TestMatchKubernetesRecords(t *testing.T) {
	s := k8sNodeStore()
	at := t0.Add(20 * time.Second)
	pod := func(uid string) PodRef { return PodRef{UID: uid} }
	tests := []struct {
		name    string
		pid     int
		ordinal int
		pod     PodRef
		want    string // hw.id; "" = no match
		by      string
		miss    PodMiss
	}{
		{"pod uid, in-pod GPU 0", -1, 0, pod("uid-1"), "GPU-b", MatchedByPod, PodDecided},
		{"in-pod pid 1 as vpid", 1, 0, pod("uid-1"), "GPU-b", MatchedByVPID, PodDecided},
		{"docker: container id only", -1, 0, PodRef{ContainerID: "c1c1c1c1c1c1c1c1"}, "GPU-b", MatchedByContainer, PodDecided},
		{"docker: short container id", -1, 0, PodRef{ContainerID: "c1c1c1c1c1c1"}, "GPU-b", MatchedByContainer, PodDecided},
		{"names, pod's GPU 0 is the lower bus", -1, 0, PodRef{Namespace: "ml", Name: "wide-2", Container: "main"}, "GPU-d", MatchedByPodOrdinal, PodDecided},
		{"names, pod's GPU 1 is the higher bus", -1, 1, PodRef{Namespace: "ml", Name: "wide-2"}, "GPU-c", MatchedByPodOrdinal, PodDecided},
		{"vpid on one of the pod's GPUs", 8, 0, pod("uid-2"), "GPU-c", MatchedByVPID, PodDecided},
		{"two GPUs, no ordinal: falls through to nothing", -1, -1, pod("uid-2"), "", "", PodNoOrdinal},
		{"ordinal beyond the pod falls to the node ordinal", -1, 2, pod("uid-2"), "GPU-d", MatchedByNodeOrdinal, PodOrdinalBeyond},
		{"MIG allocated, no process yet", -1, 0, pod("uid-4"), "MIG-e", MatchedByPod, PodDecided},
		{"time-sliced replica, no process yet", -1, 0, pod("uid-5"), "GPU-a", MatchedByPod, PodDecided},
		{"unknown pod falls to the node ordinal", -1, 1, pod("uid-9"), "GPU-b", MatchedByNodeOrdinal, PodNotFound},
		{"other container of the pod does not match", -1, 0, PodRef{UID: "uid-1", Container: "sidecar"}, "GPU-a", MatchedByNodeOrdinal, PodNotFound},
		{"host pid of the record's pod", 1000, 0, pod("uid-0"), "GPU-a", MatchedByPID, PodDecided},
		{"host pid of another pod is not the record's", 1000, 0, pod("uid-1"), "GPU-b", MatchedByPod, PodDecided},
		{"no pod: node ordinal as before", -1, 1, PodRef{}, "GPU-b", MatchedByNodeOrdinal, PodDecided},
		{"no pod: host pid as before", 1002, 0, PodRef{}, "GPU-d", MatchedByPID, PodDecided},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, ok := s.Snapshot(Query{Host: "h", At: at, PID: tt.pid, DeviceIndex: tt.ordinal, Pod: tt.pod})
			require.Equal(t, tt.want != "", ok, "matched %s by %s", snap.HWID, snap.MatchedBy)
			assert.Equal(t, tt.want, snap.HWID)
			assert.Equal(t, tt.by, snap.Match.By)
			assert.Equal(t, tt.by, snap.MatchedBy)
			assert.Equal(t, tt.miss, snap.Match.PodMiss)
		})
	}
}

// TestMatchFillsThePodAndTheAllocation: a Docker record's names come from its process, an
// allocation match keeps the allocation, and a vpid match its host pid.
func TestMatchFillsThePodAndTheAllocation(t *testing.T) {
	s := k8sNodeStore()
	at := t0.Add(20 * time.Second)
	snap, ok := s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: 0, Pod: PodRef{ContainerID: "c1c1c1c1c1c1c1c1"}})
	require.True(t, ok)
	assert.Equal(t, PodRef{UID: "uid-1", ContainerID: "c1c1c1c1c1c1c1c1", Namespace: "ml", Name: "trainer-1", Container: "main"}, snap.Match.Pod)
	assert.False(t, snap.Match.FromAllocation)

	snap, ok = s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: 0, Pod: PodRef{UID: "uid-4"}})
	require.True(t, ok)
	assert.True(t, snap.Match.FromAllocation)
	assert.Equal(t, "nvidia.com/mig-1g.10gb", snap.Match.Allocation.Resource)
	assert.Equal(t, "mig-4", snap.Match.Pod.Name)
	assert.Len(t, snap.Allocations, 1)

	snap, ok = s.Snapshot(Query{Host: "h", At: at, PID: 1, DeviceIndex: 0, Pod: PodRef{UID: "uid-1"}})
	require.True(t, ok)
	assert.Equal(t, 1001, snap.Match.HostPID)
	assert.Equal(t, 1001, snap.Match.FailingPID, "the classifier is given the host pid")

	snap, ok = s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: 1, Pod: PodRef{UID: "uid-2"}})
	require.True(t, ok)
	assert.Equal(t, 1003, snap.Match.FailingPID, "the pod's only process on its GPU 1")

	snap, ok = s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: 0, Pod: PodRef{UID: "uid-0"}})
	require.True(t, ok)
	assert.Len(t, snap.Allocations, 2, "both time-sliced pods")

	// An allocation long gone does not match: the window's own points decide, not the cache.
	_, ok = s.Snapshot(Query{Host: "h", At: t0.Add(10 * time.Minute), PID: -1, DeviceIndex: -1, Pod: PodRef{UID: "uid-4"}})
	assert.False(t, ok)
}

// TestMatchMixedModels: the pod's ordinal is read in bus order and flagged unchecked.
func TestMatchMixedModels(t *testing.T) {
	s := New(testConfig())
	observeNode(s, 10,
		k8sGPU{hwID: "GPU-x", bus: "00000000:10:00.0", model: "NVIDIA L4", index: 0,
			procs: []ProcessInfo{podProc(2000, 0, "uid-m", "mixed-0", "")}},
		k8sGPU{hwID: "GPU-y", bus: "00000000:20:00.0", model: "NVIDIA H100 80GB HBM3", index: 1,
			procs: []ProcessInfo{podProc(2001, 0, "uid-m", "mixed-0", "")}},
	)
	snap, ok := s.Snapshot(Query{Host: "h", At: t0.Add(5 * time.Second), PID: -1, DeviceIndex: 1, Pod: PodRef{UID: "uid-m"}})
	require.True(t, ok)
	assert.Equal(t, "GPU-y", snap.HWID)
	assert.Equal(t, MatchedByPodOrdinal, snap.MatchedBy)
	assert.True(t, snap.Match.MixedModels)
	assert.Equal(t, 2, snap.Match.PodGPUs)
}

// TestMatchWithoutHostSaysPodNotFound: no metrics of the host at all.
func TestMatchWithoutHostSaysPodNotFound(t *testing.T) {
	var snap Snapshot
	assert.False(t, New(testConfig()).SnapshotTo(&snap, Query{Host: "h", At: t0, PID: -1, DeviceIndex: 0, Pod: PodRef{UID: "u"}}))
	assert.Equal(t, PodNotFound, snap.Match.PodMiss)
}

// TestVPIDOfTwoContainers: each container of a pod has its own pid 1; the record's container
// name picks the right one, and without it the pod's ordinal does, with that GPU's host pid.
func TestVPIDOfTwoContainers(t *testing.T) {
	s := New(testConfig())
	side := podProc(3001, 1, "uid-p", "pair-0", "")
	side.Container = "sidecar"
	observeNode(s, 10,
		k8sGPU{hwID: "GPU-x", bus: "00000000:10:00.0", model: a100, index: 0, procs: []ProcessInfo{podProc(3000, 1, "uid-p", "pair-0", "")}},
		k8sGPU{hwID: "GPU-y", bus: "00000000:20:00.0", model: a100, index: 1, procs: []ProcessInfo{side}},
	)
	at := t0.Add(5 * time.Second)
	snap, ok := s.Snapshot(Query{Host: "h", At: at, PID: 1, DeviceIndex: 0, Pod: PodRef{UID: "uid-p", Container: "sidecar"}})
	require.True(t, ok)
	assert.Equal(t, "GPU-y", snap.HWID)
	assert.Equal(t, MatchedByVPID, snap.MatchedBy)
	assert.Equal(t, 3001, snap.Match.HostPID)

	snap, ok = s.Snapshot(Query{Host: "h", At: at, PID: 1, DeviceIndex: 1, Pod: PodRef{UID: "uid-p"}})
	require.True(t, ok)
	assert.Equal(t, "GPU-y", snap.HWID)
	assert.Equal(t, 3001, snap.Match.HostPID)
}

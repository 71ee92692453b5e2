package window

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkSnapshotToPod is BenchmarkSnapshotTo for a pod's record (CRI file_log shape: pod
// uid and names, no pid, "GPU 0") on 8 GPUs with one pod of one StatefulSet each, 16
// processes per pod and the kubelet's allocations: the pod steps match, and the workload's
// peak decodes the other seven pods' main-container series (the worst case: every process of
// the node in one workload).
func BenchmarkSnapshotToPod(b *testing.B) {
	s := New(defaultConfig())
	for g := 0; g < 8; g++ {
		k := GPUKey{Host: "node", HWID: "GPU-" + strconv.Itoa(g)}
		pod := "trainer-" + strconv.Itoa(g)
		info := GPUInfo{Name: "NVIDIA H100 80GB HBM3", BusID: "00000000:" + strconv.Itoa(10+g) + ":00.0", Index: g}
		alloc := []AllocationPoint{{Allocation: Allocation{PodUID: "uid-" + pod, PodName: pod, Namespace: "ml",
			Container: "main", DeviceID: k.HWID, Resource: "nvidia.com/gpu"}}}
		for i := 0; i < 900; i++ {
			ss := benchScrape(sec(i), i)
			for j := range ss {
				if p := &ss[j].Process; ss[j].Kind == ProcessBytes {
					p.PID += 16 * g
					p.PodUID, p.PodName, p.Namespace, p.Container = "uid-"+pod, pod, "ml", "main"
				}
			}
			s.Observe(k, info, ss)
			alloc[0].T = sec(i)
			s.ObserveAllocations(k, info, alloc)
		}
	}
	q := Query{Host: "node", At: t0.Add(899 * time.Second), PID: -1, DeviceIndex: 0,
		Pod: PodRef{UID: "uid-trainer-3", Namespace: "ml", Name: "trainer-3", Container: "main"}}
	var snap Snapshot
	if !s.SnapshotTo(&snap, q) || snap.HWID != "GPU-3" || snap.MatchedBy != MatchedByPod {
		b.Fatalf("matched %s by %s", snap.HWID, snap.MatchedBy)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.SnapshotTo(&snap, q)
	}
}

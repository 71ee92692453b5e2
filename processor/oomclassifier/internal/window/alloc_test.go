package window

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAllocationsBoundedAndAccounted: past the per-GPU cap the least recently seen
// allocation goes and is counted; allocations age out with the window; the byte budget
// follows both, and points too far ahead are rejected.
func TestAllocationsBoundedAndAccounted(t *testing.T) {
	cfg := testConfig()
	cfg.Window, cfg.MaxAllocationsPerGPU = time.Minute, 3
	cfg.MaxAhead, cfg.Now = time.Minute, func() time.Time { return t0.Add(time.Hour) }
	s := New(cfg)
	k := GPUKey{Host: "h", HWID: "GPU-a"}
	s.Observe(k, GPUInfo{Index: 0}, scrape(sec(0), 1, nil))
	var of Overflow
	for i := 0; i < 5; i++ {
		a := podAlloc("uid-"+strconv.Itoa(i), "p-"+strconv.Itoa(i), "GPU-a::"+strconv.Itoa(i), "nvidia.com/gpu.shared")
		of.Add(s.ObserveAllocations(k, GPUInfo{Index: -1}, []AllocationPoint{{T: sec(i), Allocation: a}}))
		require.Equal(t, recount(s), s.Bytes(), "after allocation %d", i)
	}
	assert.Equal(t, 2, of.AllocsEvicted)
	snap, ok := s.Snapshot(Query{Host: "h", At: t0.Add(4 * time.Second), PID: -1, DeviceIndex: -1})
	require.True(t, ok)
	require.Len(t, snap.Allocations, 3)
	assert.Equal(t, "p-2", snap.Allocations[0].PodName, "the oldest two went")

	of = s.ObserveAllocations(k, GPUInfo{Index: -1}, []AllocationPoint{{T: t0.Add(2 * time.Hour).UnixNano(), Allocation: podAlloc("u", "p", "d", "r")}})
	assert.Equal(t, 1, of.FutureRejected)

	// Five minutes on, the window has moved past every allocation.
	for i := 0; i <= 300; i += 2 {
		s.Observe(k, GPUInfo{Index: 0}, scrape(sec(i), 1, nil))
	}
	require.Equal(t, recount(s), s.Bytes())
	snap, _ = s.Snapshot(Query{Host: "h", At: t0.Add(300 * time.Second), PID: -1, DeviceIndex: -1})
	assert.Nil(t, snap.Allocations)
}

// TestWorkloadPeak: the other pods of the failing pod's workload (same namespace, owner and
// container) give the peak; the failing pod's own history is kept apart; other workloads and
// containers do not count; points after the OOM do not either.
func TestWorkloadPeak(t *testing.T) {
	s := New(testConfig())
	k := func(h string) GPUKey { return GPUKey{Host: "h", HWID: h} }
	proc := func(pid int, pod, container string) ProcessInfo {
		return ProcessInfo{PID: pid, Name: "python", PodUID: "uid-" + pod, Namespace: "ml", PodName: pod, Container: container}
	}
	for i := 0; i < 60; i++ {
		s.Observe(k("GPU-a"), GPUInfo{Index: 0}, append(scrape(sec(i), 40, nil),
			Sample{Kind: ProcessBytes, T: sec(i), V: 30*gib + int64(i)*gib/10, Process: proc(1, "trainer-7d4b9c8f6-x2k9q", "main")}))
		other := 20 * gib
		if i == 10 {
			other = 34 * gib // the sibling's peak
		}
		if i == 50 {
			other = 70 * gib // after the OOM: not part of what came before it
		}
		s.Observe(k("GPU-b"), GPUInfo{Index: 1}, append(scrape(sec(i), 75, nil),
			Sample{Kind: ProcessBytes, T: sec(i), V: other, Process: proc(2, "trainer-7d4b9c8f6-bcdfg", "main")},
			Sample{Kind: ProcessBytes, T: sec(i), V: 50 * gib, Process: proc(3, "trainer-7d4b9c8f6-bcdfg", "sidecar")},
			Sample{Kind: ProcessBytes, T: sec(i), V: 60 * gib, Process: proc(4, "server-5f6b7c8d9-zzzzz", "main")}))
	}
	at := t0.Add(40 * time.Second)
	snap, ok := s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: 0,
		Pod: PodRef{UID: "uid-trainer-7d4b9c8f6-x2k9q", Namespace: "ml", Name: "trainer-7d4b9c8f6-x2k9q", Container: "main"}})
	require.True(t, ok)
	w := snap.Workload
	require.True(t, w.Known)
	assert.Equal(t, 34*gib, w.Peak)
	assert.Equal(t, "trainer-7d4b9c8f6-bcdfg", w.PeakPod)
	assert.Equal(t, sec(10), w.PeakT)
	assert.Equal(t, 1, w.Pods)
	assert.Equal(t, 34*gib, w.OwnPeak, "the failing pod's own peak up to the OOM: 30 GiB + 40 × 0.1 GiB")
	assert.Equal(t, 34*gib, w.Now)

	snap, _ = s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: 0, Pod: PodRef{UID: "uid-trainer-7d4b9c8f6-x2k9q"}})
	assert.True(t, snap.Workload.Known, "names completed from the pod's process")
	snap, _ = s.Snapshot(Query{Host: "h", At: at, PID: -1, DeviceIndex: 0})
	assert.False(t, snap.Workload.Known, "a record without a pod has no workload")
}

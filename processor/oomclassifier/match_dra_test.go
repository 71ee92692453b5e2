package oomclassifier

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

// Allocations the kubelet reports by minor number (NVIDIA's DRA driver, GKE's device plugin)
// reach the processor as the gpu_mem receiver resolves them: on the GPU's own resource, with
// the driver's device name as the device id. Matching and reconciliation read them exactly
// as device-plugin allocations.

// TestDRAAllocationBeforeAnyProcess: a pod that got GPU 1 (minor 3) through a ResourceClaim
// failed before NVML listed a process of it; the claim's allocation names its GPU.
func TestDRAAllocationBeforeAnyProcess(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	dra := kpod{uid: "uid-d", ns: "ml", name: "claim-0", container: "main"}
	feedNode(t, p, "node-dra", 60,
		kgpu{hwID: "GPU-a", bus: "00000000:10:00.0", model: "NVIDIA A100-SXM4-40GB", index: 0, total: gpu40,
			procs: []kproc{{pid: 100, pod: podOf(1), bytes: flatBytes(10 * gib)}}, allocs: []kalloc{{pod: podOf(1), device: "gpu-2", resource: "gpu.nvidia.com"}}},
		kgpu{hwID: "GPU-b", bus: "00000000:20:00.0", model: "NVIDIA A100-SXM4-40GB", index: 1, total: gpu40,
			allocs: []kalloc{{pod: dra, device: "gpu-3", resource: "gpu.nvidia.com"}}},
	)
	a := classified(t, p, podLogs("node-dra", t0.Add(59*time.Second), dra, torchOOM(0, 40, 39.4, 0.5, 0, 0)))
	assert.Equal(t, "GPU-b", a[attrHWID])
	assert.Equal(t, "pod", a[attrMatch])
	assert.Contains(t, a[attrEvidence], "Matched to GPU-b as the only GPU the kubelet allocated to pod ml/claim-0 (gpu-3, gpu.nvidia.com); no process of the pod was listed on it yet.")
}

// TestDRAUnexpectedConsumer: a pod's process on a GPU whose claim belongs to another pod is an
// unexpected consumer, as with the device plugin.
func TestDRAUnexpectedConsumer(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	owner, intruder := podOf(1), kpod{uid: "uid-x", ns: "other", name: "miner-0", container: "main"}
	feedNode(t, p, "node-dra", 60,
		kgpu{hwID: "GPU-a", bus: "00000000:10:00.0", model: "NVIDIA A100-SXM4-40GB", index: 0, total: gpu40,
			procs:  []kproc{{pid: 100, pod: owner, bytes: flatBytes(20 * gib)}, {pid: 200, pod: intruder, bytes: flatBytes(17 * gib)}},
			allocs: []kalloc{{pod: owner, device: "gpu-0-mig-1g.10gb-19-0", resource: "gpu.nvidia.com"}}},
	)
	a := classified(t, p, podLogs("node-dra", t0.Add(59*time.Second), owner, torchOOM(0, 4, 2.4, 20, 19, 19.5)))
	assert.Equal(t, classify.CauseOtherTenant, a[attrCause], a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "the kubelet did not allocate this GPU to its pod other/miner-0 but to pod ml/trainer-1: an unexpected consumer, not scheduled here")
}

// TestGKETimeSharingTenantWasScheduled: GKE's time-sharing gives two pods replicas
// nvidia0/vgpu0 and nvidia0/vgpu1 of one GPU; the other pod's memory is other_tenant, and the
// evidence says the kubelet put it there to share.
func TestGKETimeSharingTenantWasScheduled(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	pa, pb := podOf(1), kpod{uid: "uid-s", ns: "serve", name: "api-0", container: "server"}
	feedNode(t, p, "gke-node", 60,
		kgpu{hwID: "GPU-t", bus: "00000000:10:00.0", model: "NVIDIA L4", index: 0, total: gpu40,
			procs:  []kproc{{pid: 300, pod: pa, bytes: flatBytes(20 * gib)}, {pid: 301, pod: pb, bytes: flatBytes(17 * gib)}},
			allocs: []kalloc{{pod: pa, device: "nvidia0/vgpu0", resource: "nvidia.com/gpu"}, {pod: pb, device: "nvidia0/vgpu1", resource: "nvidia.com/gpu"}}},
	)
	a := classified(t, p, podLogs("gke-node", t0.Add(59*time.Second), pa, torchOOM(0, 4, 2.4, 20, 19, 19.5)))
	assert.Equal(t, classify.CauseOtherTenant, a[attrCause], a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "the kubelet allocated this GPU to its pod serve/api-0 (nvidia0/vgpu1): it was scheduled to share this GPU (time-slicing, nvidia.com/gpu)")
}

// TestHiddenProcessesAreNoZombie: memory no listed process holds is a zombie context, unless
// the driver hid other PID namespaces' processes from the collector: then it is theirs.
func TestHiddenProcessesAreNoZombie(t *testing.T) {
	for _, hidden := range []bool{false, true} {
		t.Run(fmt.Sprint("hidden=", hidden), func(t *testing.T) {
			p := newProcessors(t, testConfig(0), nopSettings())
			feedNode(t, p, "node-ns", 60, kgpu{hwID: "GPU-z", bus: "00000000:10:00.0", model: "NVIDIA A100-SXM4-40GB",
				index: 0, total: gpu40, unlisted: 20 * gib, hidden: hidden,
				procs: []kproc{{pid: 100, bytes: flatBytes(16 * gib)}}})
			ld := logsWith("node-ns", t0.Add(59*time.Second), text(torchOOM(0, 4, 3.4, 16, 15, 15.5)))
			firstRecord(ld).Attributes().PutInt(attrProcessPID, 100)
			a := classified(t, p, ld)
			assert.Equal(t, "pid", a[attrMatch])
			if hidden {
				assert.NotEqual(t, classify.CauseZombieContext, a[attrCause], a[attrEvidence])
				if c, ok := a[attrContributing].([]any); ok {
					assert.NotContains(t, c, classify.CauseZombieContext)
				}
			} else {
				assert.Equal(t, classify.CauseZombieContext, a[attrCause], a[attrEvidence])
			}
		})
	}
}

// TestSlurmJobOnOOMRecord: a matched OOM carries the Slurm job and step of its process: the
// pid's when the record names one, else the one job holding the GPU; none when jobs share it.
func TestSlurmJobOnOOMRecord(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedNode(t, p, "gpu001", 60,
		kgpu{hwID: "GPU-0", bus: "00000000:10:00.0", model: "NVIDIA H100 80GB HBM3", index: 0, total: gpu40,
			procs: []kproc{{pid: 100, bytes: flatBytes(30 * gib), job: "4749", step: "0"}, {pid: 101, bytes: flatBytes(2 * gib), job: "4749", step: "batch"}}},
		kgpu{hwID: "GPU-1", bus: "00000000:20:00.0", model: "NVIDIA H100 80GB HBM3", index: 1, total: gpu40,
			procs: []kproc{{pid: 200, bytes: flatBytes(18 * gib), job: "4750", step: "0"}, {pid: 201, bytes: flatBytes(18 * gib), job: "4751", step: "0"}}},
	)
	at := t0.Add(59 * time.Second)
	for _, tc := range []struct {
		name      string
		ordinal   int
		pid       int64 // 0: the record names none
		job, step any   // nil: absent
	}{
		{"the record's pid", 0, 101, "4749", "batch"},
		{"the one job on the GPU, steps differ", 0, 0, "4749", nil},
		{"the pid of one of two jobs", 1, 201, "4751", "0"},
		{"two jobs on the GPU", 1, 0, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ld := logsWith("gpu001", at, text(torchOOM(tc.ordinal, 4, 3.4, 30, 29, 29.5)))
			if tc.pid != 0 {
				firstRecord(ld).Attributes().PutInt(attrProcessPID, tc.pid)
			}
			a := classified(t, p, ld)
			assert.Equal(t, fmt.Sprint("GPU-", tc.ordinal), a[attrHWID])
			assert.Equal(t, tc.job, a[attrSlurmJob])
			assert.Equal(t, tc.step, a[attrSlurmStep])
		})
	}
}

// TestSiblingsInEvidence: an 8-GPU pod's OOM on its hot GPU says how full the pod's other
// GPUs were; a Slurm job's does the same from the process's job; a GPU alone in its job
// says nothing of siblings.
func TestSiblingsInEvidence(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	train := kpod{uid: "uid-t", ns: "training", name: "llm-train-x7k2p", container: "trainer"}
	var gpus []kgpu
	for i := range 8 {
		b := int64(25+i%4) * gib / 2 // 12.5-14 GiB of 40 with the 512 MiB the builder adds: 32-36%
		if i == 3 {
			b = 38 * gib
		}
		gpus = append(gpus, kgpu{hwID: fmt.Sprint("GPU-", i), bus: fmt.Sprintf("00000000:%02X:00.0", 16+i), model: "NVIDIA A100-SXM4-40GB",
			index: int64(i), total: gpu40, procs: []kproc{{pid: int64(100 + i), pod: train, bytes: flatBytes(b)}}})
	}
	gpus = append(gpus, kgpu{hwID: "GPU-8", bus: "00000000:30:00.0", model: "NVIDIA A100-SXM4-40GB", index: 8, total: gpu40,
		procs: []kproc{{pid: 300, bytes: flatBytes(30 * gib), job: "4749", step: "0"}}})
	feedNode(t, p, "node-8", 60, gpus...)
	at := t0.Add(59 * time.Second)

	ld := logsWith("node-8", at, text(torchOOM(0, 4, 1.5, 38, 37, 37.5)))
	firstRecord(ld).Attributes().PutInt(attrProcessPID, 103)
	a := classified(t, p, ld)
	assert.Equal(t, "GPU-3", a[attrHWID])
	assert.Contains(t, a[attrEvidence], "GPU 3 held 96% of its memory at the OOM while job training/llm-train's 7 other GPUs on this host held 32-36%.")

	ld = logsWith("node-8", at, text(torchOOM(0, 4, 1.5, 30, 29, 29.5)))
	firstRecord(ld).Attributes().PutInt(attrProcessPID, 300)
	a = classified(t, p, ld)
	assert.Equal(t, "GPU-8", a[attrHWID])
	assert.NotContains(t, a[attrEvidence], "other GPU", "job 4749 holds no other GPU")
}

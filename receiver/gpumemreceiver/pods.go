package gpumemreceiver

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/podresources"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/procfs"
)

// podTracker is the scraper's Kubernetes concern (documentation.md, "Kubernetes"): which pod
// containers the kubelet allocated each device to (nvidia.gpu.allocation and its idle time),
// the pod names on per-process points, and the processes the kubelet did not place on the
// device they hold memory on (nvidia.gpu.process.unexpected.count, and one record per
// episode). The kubelet is read through podresources.Source, at most once per
// kubernetes.refresh_interval; everything here runs on the scraper's goroutine.
type podTracker struct {
	src *podresources.Source
	// snap is this scrape's view of the kubelet; valid says it ever answered (only then are
	// allocations known, and a process outside them unexpected).
	snap  *podresources.Snapshot
	valid bool

	// onDevice are the processes listed on the device being scraped, with their pods.
	onDevice []podProcess
	// active is, per allocation, when a process of its pod last held memory on its device
	// (or when the allocation was first seen); gen marks those seen this scrape.
	active map[allocKey]allocSeen
	gen    uint64
	// consumers are the unexpected consumers of the last scrape: a record is written when
	// one appears, and it is forgotten when it leaves or becomes expected.
	consumers map[consumerKey]uint64
	unexpect  *unexpectedRecords
	// reconcile: processes are listed with their cgroups (processes.enabled), so those the
	// kubelet did not place can be told.
	reconcile bool
	switches  *metadata.ResourceSwitches
}

// podProcess is one process listed on a device, with what its cgroup and the kubelet's
// directories say of its pod.
type podProcess struct {
	pid   uint32
	bytes int64
	info  procfs.Info
	id    podresources.Identity
}

type allocKey struct{ device, namespace, pod, container, deviceID string }

type allocSeen struct {
	since pcommon.Timestamp
	gen   uint64
}

type consumerKey struct {
	device string
	pid    uint32
	reason string
}

// maxTracked bounds the allocation and consumer maps: a node runs at most a few hundred
// pods; past this a new entry is simply not remembered (its idle time reads 0, its episode
// gets no record).
const maxTracked = 8192

func newPodTracker(src *podresources.Source, reconcile bool, switches *metadata.ResourceSwitches, version string, emit func(plog.Logs)) *podTracker {
	return &podTracker{
		src: src, active: map[allocKey]allocSeen{}, consumers: map[consumerKey]uint64{},
		unexpect:  &unexpectedRecords{version: version, emit: emit, uidOf: src.PodUID},
		reconcile: reconcile, switches: switches,
	}
}

// begin reads the kubelet when the cached answer is older than the refresh interval.
func (t *podTracker) begin(ctx context.Context) {
	if t == nil {
		return
	}
	t.gen++
	t.src.Refresh(ctx)
	t.snap = t.src.Snapshot()
	t.valid = !t.snap.Taken().IsZero()
}

// identity names a process's pod and container (podresources.Source.Lookup's join).
func (t *podTracker) identity(info procfs.Info, deviceUUID string) podresources.Identity {
	if t == nil || (info.PodUID == "" && info.ContainerID == "") {
		return podresources.Identity{}
	}
	return t.src.Lookup(info.PodUID, info.ContainerID, deviceUUID)
}

// observe notes a process listed on the device being scraped (once: NVML lists a process
// with compute and graphics contexts under each).
func (t *podTracker) observe(p podProcess) {
	if t == nil {
		return
	}
	for _, q := range t.onDevice {
		if q.pid == p.pid {
			return
		}
	}
	t.onDevice = append(t.onDevice, p)
}

// allocations are the kubelet's allocations of a device: by its UUID (GPU, time-sliced
// replica, MIG device UUID), and for a MIG instance also by its parent and instance ids, the
// form old drivers' device plugin ids take (MIG-GPU-<uuid>/<gi>/<ci>).
func (t *podTracker) allocations(d *nvmlx.Device) []podresources.Allocation {
	allocs := t.snap.Device(d.UUID)
	if d.Parent != nil {
		if legacy := t.snap.MIGDevice(d.Parent.UUID, int(d.GPUInstanceID), int(d.ComputeInstanceID)); len(legacy) > 0 {
			allocs = append(allocs[:len(allocs):len(allocs)], legacy...)
		}
	}
	return allocs
}

// recordDevice records the device's allocations and unexpected consumers on the resource
// being built, from the processes observed on it.
func (t *podTracker) recordDevice(mb *metadata.MetricsBuilder, d *nvmlx.Device, driver string, ts pcommon.Timestamp) {
	if t == nil {
		return
	}
	defer func() { t.onDevice = t.onDevice[:0] }()
	if !t.valid {
		return
	}
	allocs := t.allocations(d)
	for _, a := range allocs {
		t.recordAllocation(mb, d.UUID, a, ts)
	}
	if !t.reconcile {
		return
	}
	var otherPod, noPod int64
	for _, p := range t.onDevice {
		reason := unexpectedReason(p, allocs)
		if reason == "" {
			continue
		}
		if reason == metadata.AttrNvidiaGpuProcessUnexpectedReasonOtherPod {
			otherPod++
		} else {
			noPod++
		}
		key := consumerKey{device: d.UUID, pid: p.pid, reason: reason}
		if _, open := t.consumers[key]; !open && len(t.consumers) < maxTracked {
			t.unexpect.add(p, reason, allocs, ts, func(res pcommon.Map) { describe(t.switches.Wrap(res), d, driver) })
		}
		if _, open := t.consumers[key]; open || len(t.consumers) < maxTracked {
			t.consumers[key] = t.gen
		}
	}
	if dp, ok := mb.RecordInt(metadata.NvidiaGpuProcessUnexpectedCount, ts, otherPod); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuProcessUnexpectedReason, metadata.AttrNvidiaGpuProcessUnexpectedReasonOtherPod)
	}
	if dp, ok := mb.RecordInt(metadata.NvidiaGpuProcessUnexpectedCount, ts, noPod); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuProcessUnexpectedReason, metadata.AttrNvidiaGpuProcessUnexpectedReasonNoPod)
	}
}

// unexpectedReason says why the kubelet did not place p on a device allocated as allocs, or
// "" when it did (or when that cannot be told: a pod whose name the kubelet's directories do
// not give). A process of no pod on a device allocated to none is the host's business.
func unexpectedReason(p podProcess, allocs []podresources.Allocation) string {
	if p.info.PodUID == "" {
		if len(allocs) > 0 {
			return metadata.AttrNvidiaGpuProcessUnexpectedReasonNoPod
		}
		return ""
	}
	if p.id.Pod == "" {
		return ""
	}
	for _, a := range allocs {
		if a.Namespace == p.id.Namespace && a.Pod == p.id.Pod {
			return ""
		}
	}
	return metadata.AttrNvidiaGpuProcessUnexpectedReasonOtherPod
}

// recordAllocation records one allocation and how long its pod has held nothing on it.
func (t *podTracker) recordAllocation(mb *metadata.MetricsBuilder, device string, a podresources.Allocation, ts pcommon.Timestamp) {
	key := allocKey{device: device, namespace: a.Namespace, pod: a.Pod, container: a.Container, deviceID: a.DeviceID}
	seen, known := t.active[key]
	if !known {
		seen.since = ts
	}
	for _, p := range t.onDevice {
		if p.id.Namespace == a.Namespace && p.id.Pod == a.Pod {
			seen.since = ts
			break
		}
	}
	seen.gen = t.gen
	if known || len(t.active) < maxTracked {
		t.active[key] = seen
	}
	uid := t.src.PodUID(a.Namespace, a.Pod)
	if dp, ok := mb.RecordInt(metadata.NvidiaGpuAllocation, ts, 1); ok {
		putAllocationAttributes(dp.Attributes(), a, uid)
	}
	if dp, ok := mb.RecordDouble(metadata.NvidiaGpuAllocationIdleTime, ts, max(0, float64(ts-seen.since)/1e9)); ok {
		putAllocationAttributes(dp.Attributes(), a, uid)
	}
}

func putAllocationAttributes(attrs pcommon.Map, a podresources.Allocation, uid string) {
	attrs.EnsureCapacity(6)
	attrs.PutStr(metadata.AttrK8sPodName, a.Pod)
	if uid != "" {
		attrs.PutStr(metadata.AttrK8sPodUID, uid)
	}
	attrs.PutStr(metadata.AttrK8sNamespaceName, a.Namespace)
	attrs.PutStr(metadata.AttrK8sContainerName, a.Container)
	attrs.PutStr(metadata.AttrNvidiaGpuAllocationResource, a.Resource)
	attrs.PutStr(metadata.AttrNvidiaGpuAllocationDeviceID, a.DeviceID)
}

// end forgets the allocations and consumers this scrape did not see (an episode ends when
// its process leaves or becomes expected) and sends the scrape's records.
func (t *podTracker) end() {
	if t == nil {
		return
	}
	for k, v := range t.active {
		if v.gen != t.gen {
			delete(t.active, k)
		}
	}
	for k, gen := range t.consumers {
		if gen != t.gen {
			delete(t.consumers, k)
		}
	}
	t.unexpect.flush()
}

// putPodNames adds a process's pod and container names to its per-process point.
func putPodNames(attrs pcommon.Map, id podresources.Identity) {
	if id.Pod != "" {
		attrs.PutStr(metadata.AttrK8sPodName, id.Pod)
		attrs.PutStr(metadata.AttrK8sNamespaceName, id.Namespace)
	}
	if id.Container != "" {
		attrs.PutStr(metadata.AttrK8sContainerName, id.Container)
	}
}

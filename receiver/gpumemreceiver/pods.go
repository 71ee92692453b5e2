package gpumemreceiver

import (
	"context"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

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

	// What the last resolve made of the kubelet's minor-number allocations (GKE, DRA):
	// resolvedFrom is the kubelet answer it resolved, devicesSeen the device list it
	// resolved against; unresolvedPods are the pods holding an allocation no device
	// matched, and told the allocations already said so in the log.
	resolvedFrom   *podresources.Snapshot
	devicesSeen    []*nvmlx.Device
	devicesScratch []*nvmlx.Device
	unresolvedPods map[podName]bool
	told           map[allocKey]bool
	logger         *zap.Logger
	// hidden: NVML lists only the collector's own PID namespace's processes this scrape, so
	// an allocated pod's absence from a GPU says nothing: no idle time, no reconciliation.
	hidden bool
}

type podName struct{ namespace, pod string }

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

func newPodTracker(src *podresources.Source, reconcile bool, switches *metadata.ResourceSwitches, version string, emit func(plog.Logs), logger *zap.Logger) *podTracker {
	return &podTracker{
		src: src, active: map[allocKey]allocSeen{}, consumers: map[consumerKey]uint64{},
		unexpect:  &unexpectedRecords{version: version, emit: emit, uidOf: src.PodUID},
		reconcile: reconcile, switches: switches,
		unresolvedPods: map[podName]bool{}, told: map[allocKey]bool{}, logger: logger,
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

// resolve maps the allocations the kubelet names by minor number (GKE's device plugin,
// NVIDIA's DRA driver) to this node's devices, and hands the resolved snapshot back to the
// source so that container names are looked up through it too. It runs in the scrape, under
// the session's gate, and does the work only when the kubelet's answer or the device list
// (a MIG instance recreated under a new UUID) changed since the last time.
func (t *podTracker) resolve(devices []*nvmlx.Device) {
	if t == nil || !t.valid || !t.snap.NeedsResolve() {
		return
	}
	seen := t.devicesScratch[:0]
	for _, d := range devices {
		seen = append(seen, d)
		seen = append(seen, d.MIGInstances()...)
	}
	t.devicesScratch = seen
	raw := t.snap.Raw()
	if raw == t.resolvedFrom && slices.Equal(seen, t.devicesSeen) {
		return
	}
	resolved := raw.Resolve(func(r podresources.MinorRef) string { return uuidOfRef(devices, r) })
	t.src.Replace(t.snap, resolved)
	t.snap, t.resolvedFrom = resolved, raw
	t.devicesSeen, t.devicesScratch = slices.Clone(seen), t.devicesSeen[:0]
	clear(t.unresolvedPods)
	for _, a := range resolved.Unresolved() {
		t.unresolvedPods[podName{a.Namespace, a.Pod}] = true
		key := allocKey{namespace: a.Namespace, pod: a.Pod, container: a.Container, deviceID: a.DeviceID}
		if t.told[key] || len(t.told) >= maxTracked {
			continue
		}
		t.told[key] = true
		t.logger.Info("A GPU allocation names a device no GPU of this node matches; processes of its pod are counted as allocation_unresolved, not as unexpected consumers",
			zap.String("namespace", a.Namespace), zap.String("pod", a.Pod), zap.String("container", a.Container),
			zap.String("resource", a.Resource), zap.String("device_id", a.DeviceID), zap.String("claim", a.Claim.Name),
			zap.String("hint", "the id names a GPU by its minor number (/dev/nvidia<minor>) or MIG placement; check that NVML lists that GPU and, for MIG, that the collector may query GPU instances (root)"))
	}
}

// uuidOfRef finds the device a minor-number reference names: a GPU by its minor number; a
// MIG device of the GPU with the parent's minor by GKE's GPU instance id (its compute
// instance 0), or by the DRA name's GI profile id and placement start, or, where NVML did
// not give those, by the DRA name's profile when exactly one instance has it. "" when no
// device (or more than one) matches.
func uuidOfRef(devices []*nvmlx.Device, r podresources.MinorRef) string {
	for _, d := range devices {
		if d.Minor != r.Minor {
			continue
		}
		if !r.MIG() {
			return d.UUID
		}
		match := ""
		for _, inst := range d.MIGInstances() {
			var ok bool
			switch {
			case r.GI >= 0:
				ok = inst.GPUInstanceID == int64(r.GI) && inst.ComputeInstanceID == 0
			case inst.GIProfileID >= 0:
				ok = inst.GIProfileID == r.ProfileID && inst.PlacementStart == r.PlacementStart
			default:
				ok = inst.Profile != "" && podresources.DRAProfileName(inst.Profile) == r.Profile
			}
			if !ok {
				continue
			}
			if match != "" {
				return "" // two instances of the profile: the name does not say which
			}
			match = inst.UUID
		}
		return match
	}
	return ""
}

// setHidden says whether this scrape's process lists leave out other PID namespaces.
func (t *podTracker) setHidden(hidden bool) {
	if t != nil {
		t.hidden = hidden
	}
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
	mb.RecordDouble(metadata.NvidiaGpuAllocationAge, ts, max(ts.AsTime().Sub(t.snap.Taken()).Seconds(), 0))
	allocs := t.allocations(d)
	for _, a := range allocs {
		t.recordAllocation(mb, d.UUID, a, ts)
	}
	if !t.reconcile || t.hidden {
		return
	}
	var otherPod, noPod, unresolved int64
	for _, p := range t.onDevice {
		reason := unexpectedReason(p, allocs)
		if reason == "" {
			continue
		}
		if reason == metadata.AttrNvidiaGpuProcessUnexpectedReasonOtherPod && t.unresolvedPods[podName{p.id.Namespace, p.id.Pod}] {
			// Its pod holds a GPU we could not map: most likely this one. Counted, no record.
			unresolved++
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
	if dp, ok := mb.RecordInt(metadata.NvidiaGpuProcessUnexpectedCount, ts, unresolved); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuProcessUnexpectedReason, metadata.AttrNvidiaGpuProcessUnexpectedReasonAllocationUnresolved)
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
	if t.hidden {
		return
	}
	if dp, ok := mb.RecordDouble(metadata.NvidiaGpuAllocationIdleTime, ts, max(0, float64(ts-seen.since)/1e9)); ok {
		putAllocationAttributes(dp.Attributes(), a, uid)
	}
}

func putAllocationAttributes(attrs pcommon.Map, a podresources.Allocation, uid string) {
	attrs.EnsureCapacity(11)
	attrs.PutStr(metadata.AttrK8sPodName, a.Pod)
	if uid != "" {
		attrs.PutStr(metadata.AttrK8sPodUID, uid)
	}
	attrs.PutStr(metadata.AttrK8sNamespaceName, a.Namespace)
	attrs.PutStr(metadata.AttrK8sContainerName, a.Container)
	attrs.PutStr(metadata.AttrNvidiaGpuAllocationResource, a.Resource)
	attrs.PutStr(metadata.AttrNvidiaGpuAllocationDeviceID, a.DeviceID)
	if c := a.Claim; c.Driver != "" {
		attrs.PutStr(metadata.AttrNvidiaGpuAllocationClaimName, c.Name)
		attrs.PutStr(metadata.AttrNvidiaGpuAllocationClaimNS, c.Namespace)
		attrs.PutStr(metadata.AttrNvidiaGpuAllocationDraDriver, c.Driver)
		attrs.PutStr(metadata.AttrNvidiaGpuAllocationDraPool, c.Pool)
		attrs.PutStr(metadata.AttrNvidiaGpuAllocationDraDevice, c.Device)
	}
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

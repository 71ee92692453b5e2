package gpumemreceiver

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/podresources"
)

// unexpectedRecords collects a scrape's unexpected-consumer records (documentation.md,
// "Kubernetes"): one per episode of a process holding memory on a device the kubelet did not
// place it on, sent once the scrape is done.
type unexpectedRecords struct {
	version string
	// uidOf gives an allocated pod's uid from the kubelet's log directory ("" when unknown).
	uidOf   func(namespace, pod string) string
	emit    func(plog.Logs)
	pending plog.Logs
}

// add queues the record of a new episode. describeDevice fills the device's resource.
func (u *unexpectedRecords) add(p podProcess, reason string, allocs []podresources.Allocation, ts pcommon.Timestamp, describeDevice func(pcommon.Map)) {
	res, lr := appendEventRecord(&u.pending, u.version, metadata.LogEventNameProcessUnexpected, ts)
	describeDevice(res)
	attrs := lr.Attributes()
	putProcessAttributes(attrs, p.pid, p.info)
	putPodNames(attrs, p.id)
	attrs.PutStr(metadata.AttrNvidiaGpuProcessUnexpectedReason, reason)
	if p.bytes >= 0 {
		attrs.PutInt(metadata.LogAttrProcessMemory, p.bytes)
	}
	names := attrs.PutEmptySlice(metadata.LogAttrAllocatedPodName)
	namespaces := attrs.PutEmptySlice(metadata.LogAttrAllocatedNamespaceName)
	uids := attrs.PutEmptySlice(metadata.LogAttrAllocatedPodUID)
	for _, a := range distinctPods(allocs) {
		names.AppendEmpty().SetStr(a.Pod)
		namespaces.AppendEmpty().SetStr(a.Namespace)
		uids.AppendEmpty().SetStr(u.uidOf(a.Namespace, a.Pod))
	}
	lr.Body().SetStr(unexpectedBody(p, reason, allocs))
}

// flush sends what the scrape queued.
func (u *unexpectedRecords) flush() {
	if u.pending == (plog.Logs{}) {
		return
	}
	ld := u.pending
	u.pending = plog.Logs{}
	u.emit(ld)
}

// distinctPods lists each pod of allocs once (a pod may hold several replicas of a GPU).
func distinctPods(allocs []podresources.Allocation) []podresources.Allocation {
	var out []podresources.Allocation
	for _, a := range allocs {
		dup := false
		for _, o := range out {
			if o.Namespace == a.Namespace && o.Pod == a.Pod {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, a)
		}
	}
	return out
}

// unexpectedBody is the record's text for the person on call: who holds the memory, whose
// GPU it is, and what to check.
func unexpectedBody(p podProcess, reason string, allocs []podresources.Allocation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d", p.pid)
	if p.info.ExecutableName != "" {
		fmt.Fprintf(&b, " (%s)", p.info.ExecutableName)
	}
	switch {
	case p.id.Pod != "":
		fmt.Fprintf(&b, " of pod %s/%s", p.id.Namespace, p.id.Pod)
	case p.info.PodUID != "":
		fmt.Fprintf(&b, " of pod uid %s", p.info.PodUID)
	case p.info.ContainerID != "":
		fmt.Fprintf(&b, " in container %s (no pod)", p.info.ContainerID[:min(len(p.info.ContainerID), 12)])
	default:
		b.WriteString(" (no pod, no container)")
	}
	if p.bytes >= 0 {
		fmt.Fprintf(&b, " holds %s on this GPU", humanBytes(float64(p.bytes)))
	} else {
		b.WriteString(" holds a context on this GPU")
	}
	pods := distinctPods(allocs)
	if len(pods) == 0 {
		b.WriteString(", which the kubelet allocated to no pod")
	} else {
		names := make([]string, len(pods))
		for i, a := range pods {
			names[i] = a.Namespace + "/" + a.Pod
		}
		fmt.Fprintf(&b, ", which the kubelet allocated to %s", strings.Join(names, ", "))
	}
	if reason == metadata.AttrNvidiaGpuProcessUnexpectedReasonNoPod {
		b.WriteString(". A process outside Kubernetes uses a GPU the scheduler gave to a pod: its memory is missing from that pod's budget.")
	} else {
		b.WriteString(". Its pod did not request this GPU (NVIDIA_VISIBLE_DEVICES=all, a privileged container, or a device mounted by hand bypass the device plugin): the scheduler cannot account for its memory.")
	}
	return b.String()
}

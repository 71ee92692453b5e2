package window

import (
	"cmp"
	"slices"
)

// How a record was matched to its GPU (gpu.oom.match), in the order match tries them.
const (
	MatchedByPID         = "pid"          // the pid holds memory on exactly that GPU at that time
	MatchedByVPID        = "vpid"         // the record's pid is a process.vpid of its pod there
	MatchedByPod         = "pod"          // the record's pod holds, or was allocated, only that GPU
	MatchedByContainer   = "container"    // as pod, through container.id
	MatchedByPodOrdinal  = "pod_ordinal"  // the message's ordinal among the pod's GPUs
	MatchedByOnlyGPU     = "only_gpu"     // the host has one GPU reporting at that time
	MatchedByNodeOrdinal = "node_ordinal" // the message's ordinal equals nvidia.gpu.index
)

// PodMiss says why the pod steps did not decide, for a record that names a pod.
type PodMiss uint8

const (
	PodDecided       PodMiss = iota // a pod step matched, or the record names no pod
	PodNotFound                     // no process of the pod on the host then, and no allocation
	PodNoOrdinal                    // the pod has several GPUs and the message gives no ordinal
	PodOrdinalBeyond                // the message's ordinal is not below the pod's GPU count
)

// Match says how the record was matched, for the evidence.
type Match struct {
	By string // a MatchedBy kind; "" when none
	// Pod is the record's identity, completed from the process or allocation that matched.
	Pod     PodRef
	PodMiss PodMiss
	PodGPUs int // GPUs the pod held (or was allocated) at the time; 0 when not found
	// FromAllocation: the pod's GPUs are the kubelet's allocation, no process of it listed.
	FromAllocation bool
	Allocation     Allocation // the matched GPU's allocation to the pod, when FromAllocation
	// MixedModels: the pod's GPUs are not all one model, so CUDA's default order (fastest
	// first) may differ from PCI bus order, which pod_ordinal assumed.
	MixedModels bool
	HostPID     int // vpid: the process's host pid; 0 otherwise
	// FailingPID is the host pid of the record's process on the matched GPU, for a record
	// naming a pod: the pid or vpid that matched, else the pod's only process there; 0 when
	// not known. The classifier's rules need the failing process, and a pod's record gives
	// no host pid.
	FailingPID int
}

// maxStackGPUs sizes match's arrays on the stack: a node has up to 16 GPUs (a gateway's
// hosts are told apart by host.name before this), more spill to the heap.
const maxStackGPUs = 16

// match chooses the record's GPU: its host pid; its in-pod pid (vpid); its pod's only GPU, or
// the message's ordinal among the pod's GPUs in CUDA's order; the host's only GPU; the node
// ordinal. Each step that cannot decide falls through, and m says why.
func (s *Store) match(h *host, q Query, at int64, m *Match) *gpu {
	var liveBuf, holdersBuf, podBuf [maxStackGPUs]*gpu
	live := liveBuf[:0]
	for _, g := range h.gpus {
		if s.alive(g, at) {
			live = append(live, g)
		}
	}
	// Map iteration order is random; sort so that ties resolve the same way every time.
	slices.SortFunc(live, func(a, b *gpu) int { return cmp.Compare(a.key.HWID, b.key.HWID) })
	*m = Match{Pod: q.Pod}
	from, to := at-int64(s.cfg.Window), at+int64(lookAhead)
	pod := q.Pod.Known()
	var podGPUs []*gpu
	byContainer := false
	if pod {
		podGPUs, byContainer = s.podGPUs(podBuf[:0], live, q.Pod, at, m)
	}
	if q.PID >= 0 {
		holders := holdersBuf[:0]
		var held *proc
		for _, g := range live {
			if p := g.procs[q.PID]; p != nil && p.s.any(from, to) && !(pod && q.Pod.contradicts(&p.info)) {
				holders, held = append(holders, g), p
			}
		}
		if g := pick(holders, podGPUs, pod, q.DeviceIndex); g != nil {
			m.By = MatchedByPID
			m.Pod.fill(held.info.PodUID, held.info.Namespace, held.info.PodName, held.info.Container, held.info.ContainerID)
			return g
		}
	}
	if pod && q.PID > 0 {
		holders := holdersBuf[:0]
		for _, g := range live {
			if vpidHolder(g, q.Pod, q.PID, from, to) > 0 {
				holders = append(holders, g)
			}
		}
		if g := pick(holders, podGPUs, true, q.DeviceIndex); g != nil {
			m.By, m.HostPID = MatchedByVPID, vpidHolder(g, q.Pod, q.PID, from, to)
			return g
		}
	}
	if pod {
		if g := podStep(podGPUs, byContainer, q.DeviceIndex, m); g != nil {
			return g
		}
	}
	if len(live) == 1 {
		m.By = MatchedByOnlyGPU
		return live[0]
	}
	if g := byIndex(live, q.DeviceIndex); g != nil {
		m.By = MatchedByNodeOrdinal
		return g
	}
	return nil
}

// vpidHolder is the host pid of the pod's process on g whose vpid is vpid, the lowest when
// several are (containers of one pod have pid namespaces of their own); 0 when none.
func vpidHolder(g *gpu, r PodRef, vpid int, from, to int64) int {
	found := 0
	for _, p := range g.procs {
		if ok, _ := r.holds(&p.info); ok && p.info.VPID == vpid && (found == 0 || p.info.PID < found) && p.s.any(from, to) {
			found = p.info.PID
		}
	}
	return found
}

// pick chooses among the GPUs a process holds: the only one; else, for a pod's record, the
// message's ordinal among the pod's GPUs when the process holds that one; else the node
// ordinal (a process on several GPUs, data parallel in one process).
func pick(holders, podGPUs []*gpu, pod bool, ordinal int) *gpu {
	switch {
	case len(holders) == 1:
		return holders[0]
	case len(holders) == 0:
		return nil
	case pod:
		if ordinal >= 0 && ordinal < len(podGPUs) && slices.Contains(holders, podGPUs[ordinal]) {
			return podGPUs[ordinal]
		}
		return nil
	}
	return byIndex(holders, ordinal)
}

// podStep decides by the pod's GPUs: its only one, or the message's ordinal among them.
func podStep(podGPUs []*gpu, byContainer bool, ordinal int, m *Match) *gpu {
	m.PodGPUs = len(podGPUs)
	switch {
	case len(podGPUs) == 0:
		m.PodMiss = PodNotFound
	case len(podGPUs) == 1:
		m.By = MatchedByPod
		if byContainer {
			m.By = MatchedByContainer
		}
		return podGPUs[0]
	case ordinal < 0:
		m.PodMiss = PodNoOrdinal
	case ordinal >= len(podGPUs):
		m.PodMiss = PodOrdinalBeyond
	default:
		m.By = MatchedByPodOrdinal
		return podGPUs[ordinal]
	}
	return nil
}

func byIndex(gs []*gpu, idx int) *gpu {
	if idx < 0 {
		return nil
	}
	var found *gpu
	for _, g := range gs {
		if g.info.Index == idx {
			if found != nil {
				return nil // two GPUs claim the ordinal: do not guess
			}
			found = g
		}
	}
	return found
}

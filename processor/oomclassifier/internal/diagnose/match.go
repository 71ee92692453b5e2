package diagnose

import (
	"strconv"
	"strings"

	"github.com/gpumem/otelcol-gpumem/internal/k8sname"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file says in the evidence how a Kubernetes record was matched to its GPU, and what
// its workload held before. A record naming no pod gets neither sentence: on a bare host the
// pid, only-GPU and node-ordinal matches mean what they always meant.

// matchKind is gpu.oom.match.
func matchKind(gpu *classify.GPUState) string {
	if gpu == nil || gpu.MatchedBy == "" {
		return classify.MatchedByNone
	}
	return gpu.MatchedBy
}

// matchConfidence is the most a match allows. An ordinal read among a pod's GPUs of mixed
// models assumed PCI bus order where CUDA puts the faster model first: medium. The node
// ordinal for a pod's record is CUDA's numbering inside the pod read as the node's: low.
func matchConfidence(m *window.Match, pod bool) string {
	switch {
	case m.By == window.MatchedByPodOrdinal && m.MixedModels:
		return classify.ConfidenceMedium
	case m.By == window.MatchedByNodeOrdinal && pod:
		return classify.ConfidenceLow
	}
	return ""
}

// matchNote is the evidence sentence on the match of a record that names a pod; "" for
// others. gpu is nil when no GPU was matched (the classifier has said why).
func matchNote(m *window.Match, in *Input, gpu *classify.GPUState) string {
	if !in.Pod {
		return ""
	}
	pod := podNoun(&m.Pod)
	miss := ""
	switch m.PodMiss {
	case window.PodNotFound:
		miss = capitalise(pod) + " was not found in the window: no process of it on the host's GPUs and no kubelet allocation at the OOM's time. "
	case window.PodNoOrdinal:
		miss = capitalise(pod) + " had " + strconv.Itoa(m.PodGPUs) + " GPUs and the message names no device ordinal. "
	case window.PodOrdinalBeyond:
		miss = "The message's GPU " + strconv.Itoa(in.OOM.DeviceIndex) + " is beyond the " + strconv.Itoa(m.PodGPUs) +
			" GPUs of " + pod + ". "
	}
	if gpu == nil {
		return strings.TrimSpace(miss)
	}
	to := "Matched to " + shortID(gpu.HWID)
	switch m.By {
	case window.MatchedByPID:
		return miss + to + " by host pid " + strconv.Itoa(in.OOM.PID) + ", which held memory there."
	case window.MatchedByVPID:
		return to + " by pid " + strconv.Itoa(in.OOM.PID) + " inside " + pod + " (process.vpid of host pid " +
			strconv.Itoa(m.HostPID) + ")."
	case window.MatchedByContainer:
		return to + " as the only GPU the processes of container " + shortID(m.Pod.ContainerID) + " (" + pod + ") held."
	case window.MatchedByPod:
		if m.FromAllocation {
			return to + " as the only GPU the kubelet allocated to " + pod + " (" + allocationNoun(&m.Allocation) +
				"); no process of the pod was listed on it yet."
		}
		return to + " as the only GPU the processes of " + pod + " held."
	case window.MatchedByPodOrdinal:
		of := pod + "'s " + strconv.Itoa(m.PodGPUs) + " GPUs"
		if m.FromAllocation {
			of = "the " + strconv.Itoa(m.PodGPUs) + " GPUs the kubelet allocated to " + pod
		}
		s := to + " as GPU " + strconv.Itoa(in.OOM.DeviceIndex) + " of " + of
		if m.MixedModels {
			return s + " in PCI bus order; the GPUs are of different models, so CUDA's default order (fastest first) could not be checked."
		}
		return s + " in CUDA's order (identical " + gpu.Name + ", so PCI bus order)."
	case window.MatchedByOnlyGPU:
		return miss + to + " as the host's only GPU."
	case window.MatchedByNodeOrdinal:
		return miss + to + " by the message's GPU " + strconv.Itoa(in.OOM.DeviceIndex) +
			" read as the node's nvidia.gpu.index, which could not be checked against the pod: CUDA inside a pod numbers only the pod's own GPUs."
	}
	return strings.TrimSpace(miss)
}

// workloadNote cites the workload's peak in the window and how the failing process compares:
// the baseline the Prometheus rules keep over days, as far as this window sees it. stated is
// the process's total the message gave (-1 when none).
func workloadNote(w *window.WorkloadPeak, pod *window.PodRef, stated int64) string {
	if !w.Known || (w.Peak < 0 && w.OwnPeak < 0) {
		return ""
	}
	now := stated
	if now < 0 {
		now = w.Now
	}
	key := k8sname.Key(pod.Namespace, pod.Name, pod.Container)
	if w.Peak < 0 {
		s := "Workload " + key + " has no other pod on this host in the window; this pod's process peaked at " +
			classify.HumanBytes(w.OwnPeak) + " in it"
		if now >= 0 {
			s += " and held " + classify.HumanBytes(now) + " at the OOM"
		}
		return s + "."
	}
	pods := strconv.Itoa(w.Pods) + " other pod"
	if w.Pods >= 8 {
		pods = "at least 8 other pods"
	} else if w.Pods > 1 {
		pods += "s"
	}
	s := "Workload " + key + " (" + pods + " on this host) peaked at " + classify.HumanBytes(w.Peak) +
		" per process in the window (pod " + w.PeakPod + ")"
	if now >= 0 && w.Peak > 0 {
		pct := 100 * float64(now-w.Peak) / float64(w.Peak)
		switch {
		case pct > 0.5:
			s += "; the failing process held " + classify.HumanBytes(now) + " at the OOM, " + strconv.FormatFloat(pct, 'f', 0, 64) + "% above that peak"
		default:
			s += "; the failing process held " + classify.HumanBytes(now) + " at the OOM, " +
				strconv.FormatFloat(100*float64(now)/float64(w.Peak), 'f', 0, 64) + "% of that peak"
		}
	}
	return s + "."
}

// podNoun names the record's pod for a sentence: "pod ns/name", else by uid or container.
func podNoun(r *window.PodRef) string {
	switch {
	case r.Namespace != "" && r.Name != "":
		return "pod " + r.Namespace + "/" + r.Name
	case r.UID != "":
		return "pod " + shortID(r.UID)
	default:
		return "container " + shortID(r.ContainerID)
	}
}

// allocationNoun names an allocation by the device plugin's id and resource.
func allocationNoun(a *window.Allocation) string {
	if a.Resource == "" {
		return a.DeviceID
	}
	return a.DeviceID + ", " + a.Resource
}

// shortID keeps enough of a UUID or container id to find it, as the classifier's sentences do.
func shortID(id string) string {
	const keep = 12
	if len(id) <= keep {
		return id
	}
	return id[:keep] + "…"
}

// capitalise starts a sentence with the noun ("pod …", "container …").
func capitalise(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// siblingNote compares the matched GPU with the other GPUs of the record's job on the host:
// "GPU 3 held 97% of its memory at the OOM while the job's 7 other GPUs on this host held
// 61-64%." Data-parallel ranks hold nearly the same share, so a gap is an imbalanced or
// leaking rank, and no gap says the whole job is at its GPUs' limit.
func siblingNote(snap *window.Snapshot) string {
	sib := &snap.Siblings
	if sib.N == 0 || sib.Self < 0 {
		return ""
	}
	name := snap.HWID
	if snap.Info.Index >= 0 {
		name = "GPU " + strconv.Itoa(snap.Info.Index)
	}
	pct := func(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) }
	held := pct(sib.Min) + "%"
	if lo, hi := pct(sib.Min), pct(sib.Max); lo != hi {
		held = lo + "-" + hi + "%"
	}
	others := "other GPU"
	if sib.N > 1 {
		others = strconv.Itoa(sib.N) + " other GPUs"
	}
	return name + " held " + pct(sib.Self) + "% of its memory at the OOM while job " + sib.Job + "'s " + others +
		" on this host held " + held + "."
}

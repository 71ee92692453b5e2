package classify

import "strings"

// The scheduler's side of other_tenant: the kubelet's allocations of the GPU (PodResources,
// nvidia.gpu.allocation) say whether the tenant was placed on it. A tenant the kubelet put
// there (time-slicing, MPS, a shared resource) is a sizing problem between pods that were
// meant to share; one it did not put there (another pod's process, or a process of no pod on
// an allocated GPU) is an unexpected consumer, which no resize of the failing pod fixes.

// reconcileClause says whether the tenant's pod was allocated the GPU, or "" when the window
// has no allocation of the GPU (no PodResources data: nothing to compare against).
func reconcileClause(g *GPUState, tenant *Process) string {
	if len(g.Allocations) == 0 || tenant == nil {
		return ""
	}
	if !hasPod(tenant) {
		return "; that process belongs to no pod while the kubelet allocated this GPU to " +
			allocatedPods(g.Allocations) + ": an unexpected consumer, not scheduled here"
	}
	for i := range g.Allocations {
		if a := &g.Allocations[i]; allocatedTo(a, tenant) {
			how := "it was scheduled here"
			if shared(g.Allocations, a) {
				how = "it was scheduled to share this GPU (" + sharing(a) + ")"
			}
			return "; the kubelet allocated this GPU to its " + podName(tenant.Namespace, tenant.PodName, tenant.PodUID) +
				" (" + a.DeviceID + "): " + how
		}
	}
	return "; the kubelet did not allocate this GPU to its " + podName(tenant.Namespace, tenant.PodName, tenant.PodUID) +
		" but to " + allocatedPods(g.Allocations) + ": an unexpected consumer, not scheduled here"
}

// hasPod: the cgroup or the receiver's join named the process's pod.
func hasPod(p *Process) bool { return p.PodUID != "" || (p.Namespace != "" && p.PodName != "") }

// allocatedTo compares by pod uid when both have one, else by namespace and pod name:
// PodResources lists names only, and the receiver fills the uid from the pod log directory.
func allocatedTo(a *Allocation, p *Process) bool {
	if a.PodUID != "" && p.PodUID != "" {
		return a.PodUID == p.PodUID
	}
	return a.PodName != "" && a.Namespace == p.Namespace && a.PodName == p.PodName
}

// shared reports whether the GPU was allocated as a replica or to more than one pod.
func shared(all []Allocation, a *Allocation) bool {
	if replica(a) {
		return true
	}
	for i := range all {
		if all[i].PodUID != a.PodUID || all[i].PodName != a.PodName {
			return true
		}
	}
	return false
}

// replica reports whether the device id names a time-sliced replica of a GPU: NVIDIA's device
// plugin writes <uuid>::<n>, GKE's nvidia<minor>/vgpu<n>.
func replica(a *Allocation) bool {
	return strings.Contains(a.DeviceID, "::") || strings.Contains(a.DeviceID, "/vgpu")
}

// sharing names the sharing mechanism the device plugin's id or resource shows.
func sharing(a *Allocation) string {
	if replica(a) || strings.HasSuffix(a.Resource, ".shared") {
		return "time-slicing, " + a.Resource
	}
	return "allocated to several pods, " + a.Resource
}

// allocatedPods lists the pods the GPU is allocated to, at most two by name.
func allocatedPods(as []Allocation) string {
	var names [2]string
	n, more := 0, false
	for i := range as {
		a := &as[i]
		name := podName(a.Namespace, a.PodName, a.PodUID)
		if (n > 0 && names[0] == name) || (n > 1 && names[1] == name) {
			continue // one entry per container: name each pod once
		}
		if n < len(names) {
			names[n] = name
			n++
		} else if name != names[0] && name != names[1] {
			more = true
		}
	}
	if more { // a count would need a set of the names; the first two say enough
		return strings.Join(names[:n], ", ") + " and others"
	}
	return strings.Join(names[:n], " and ")
}

// podName names a pod for a sentence: "pod ns/name", else by uid.
func podName(ns, name, uid string) string {
	switch {
	case name != "" && ns != "":
		return "pod " + ns + "/" + name
	case name != "":
		return "pod " + name
	default:
		return "pod " + shortID(uid)
	}
}

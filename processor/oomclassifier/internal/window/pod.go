package window

import (
	"cmp"
	"slices"
	"strings"
)

// PodRef is the Kubernetes identity a log record carries: the container parser of file_log
// sets the pod's uid and names from the log path, Docker's json logs give the container id.
// A field is "" when the record does not say.
type PodRef struct {
	UID         string // k8s.pod.uid
	ContainerID string // container.id
	Namespace   string // k8s.namespace.name
	Name        string // k8s.pod.name
	Container   string // k8s.container.name
}

// Known reports whether the record names a pod or container the window could look up.
func (r *PodRef) Known() bool {
	return r.UID != "" || r.ContainerID != "" || (r.Namespace != "" && r.Name != "")
}

// holds reports whether the process belongs to the record's pod (and container, when both
// name one), and whether container.id decided it. The most specific key both sides carry
// decides: a container id, else the pod uid, else namespace and pod name.
func (r *PodRef) holds(p *ProcessInfo) (ok, byContainer bool) {
	if r.ContainerID != "" && p.ContainerID != "" {
		return sameContainer(r.ContainerID, p.ContainerID), true
	}
	if !r.samePod(p.PodUID, p.Namespace, p.PodName) {
		return false, false
	}
	return r.Container == "" || p.Container == "" || r.Container == p.Container, false
}

// allocated reports whether the allocation is the record's pod's (and container's, when both
// name one). Allocations carry no container id: a record with only that matches none.
func (r *PodRef) allocated(a *Allocation) bool {
	return r.samePod(a.PodUID, a.Namespace, a.PodName) &&
		(r.Container == "" || a.Container == "" || r.Container == a.Container)
}

// contradicts reports whether the process is known to be in another pod or container than
// the record's: then a host pid that happens to equal the record's (in-pod) pid is not it.
func (r *PodRef) contradicts(p *ProcessInfo) bool {
	switch {
	case r.ContainerID != "" && p.ContainerID != "":
		return !sameContainer(r.ContainerID, p.ContainerID)
	case r.UID != "" && p.PodUID != "":
		return r.UID != p.PodUID
	case r.Name != "" && p.PodName != "":
		return r.Namespace != p.Namespace || r.Name != p.Name
	}
	return false
}

func (r *PodRef) samePod(uid, ns, name string) bool {
	switch {
	case r.UID != "" && uid != "":
		return r.UID == uid
	case r.Name != "" && name != "":
		return r.Namespace == ns && r.Name == name
	}
	return false
}

// fill completes the record's identity from what matched it: a Docker log names only its
// container, whose process knows the pod; the evidence and the workload need the names.
func (r *PodRef) fill(uid, ns, name, container, containerID string) {
	if r.UID == "" {
		r.UID = uid
	}
	if r.Namespace == "" && r.Name == "" {
		r.Namespace, r.Name = ns, name
	}
	if r.Container == "" {
		r.Container = container
	}
	if r.ContainerID == "" {
		r.ContainerID = containerID
	}
}

// minContainerID is the shortest container id prefix taken as naming one container: Docker
// prints 12 characters, and the runtimes write 64.
const minContainerID = 12

// sameContainer compares container ids, accepting a short form against the full one.
func sameContainer(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || (len(a) >= minContainerID && strings.HasPrefix(b, a))
}

// podGPUs appends to dst the live GPUs on which a process of the record's pod held memory
// within the window up to the OOM, else (no process listed yet: the OOM came while the pod
// started) those the kubelet had allocated to it then, in CUDA's order. byContainer says a
// container id decided. The pod's names are completed in m, and m says where they came from.
func (s *Store) podGPUs(dst, live []*gpu, r PodRef, at int64, m *Match) (gpus []*gpu, byContainer bool) {
	from, to := at-int64(s.cfg.Window), at+int64(lookAhead)
	for _, g := range live {
		for _, p := range g.procs {
			if ok, byC := r.holds(&p.info); ok && p.s.any(from, to) {
				dst, byContainer = append(dst, g), byContainer || byC
				m.Pod.fill(p.info.PodUID, p.info.Namespace, p.info.PodName, p.info.Container, p.info.ContainerID)
				break
			}
		}
	}
	if len(dst) == 0 {
		for _, g := range live {
			for i := range g.allocs {
				if a := &g.allocs[i]; a.allocatedAt(at) && r.allocated(&a.Allocation) {
					dst = append(dst, g)
					m.FromAllocation, m.Allocation = true, a.Allocation
					m.Pod.fill(a.PodUID, a.Namespace, a.PodName, a.Container, "")
					break
				}
			}
		}
	}
	m.MixedModels = cudaOrder(dst)
	return dst, byContainer
}

// cudaOrder sorts a pod's GPUs the way CUDA numbers them inside the pod, and reports whether
// that order is a guess. The container sees only its allocated devices, and CUDA's default
// CUDA_DEVICE_ORDER=FASTEST_FIRST puts faster devices first and orders equals by PCI bus id:
// among identical models, bus order is CUDA's order. Among different models "faster" is
// CUDA's own heuristic, so bus order is kept and reported as unchecked. A MIG instance is
// one device; instances of one GPU share its bus id and are ordered by index, then UUID.
func cudaOrder(gs []*gpu) (mixed bool) {
	slices.SortFunc(gs, func(a, b *gpu) int {
		return cmp.Or(cmp.Compare(a.info.BusID, b.info.BusID), cmp.Compare(a.info.Index, b.info.Index),
			cmp.Compare(a.key.HWID, b.key.HWID))
	})
	for _, g := range gs {
		if g.info.Name != gs[0].info.Name || g.info.Name == "" {
			return len(gs) > 1
		}
	}
	return false
}

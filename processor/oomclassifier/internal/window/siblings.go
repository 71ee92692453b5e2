package window

import (
	"github.com/gpumem/otelcol-gpumem/internal/k8sname"
)

// Siblings are the host's other GPUs on which the failing job held memory at the OOM. The
// ranks of a data-parallel job hold nearly the same share of their GPUs, so the matched GPU
// far above them is an imbalanced or leaking rank, and all of them near full is a job too
// large for its GPUs.
type Siblings struct {
	// Job names the job: "<namespace>/<owner>" for a Kubernetes workload (k8sname.Workload),
	// "slurm/<id>" for a Slurm job; "" when the record's job is not known.
	Job string
	N   int // siblings found
	// Min and Max are the siblings' used/total at the OOM; Self is the matched GPU's, -1 when
	// its memory is not known then.
	Min, Max, Self float64
}

// siblings finds the job of the record (its pod's workload, else the failing process's
// Slurm job) and the other live GPUs of the host holding memory of it at at.
func (s *Store) siblings(h *host, self *gpu, pod *PodRef, slurmJob string, at int64) Siblings {
	sib := Siblings{Self: usedFraction(self, at)}
	var owner string
	switch {
	case pod.Namespace != "" && pod.Name != "":
		owner = k8sname.Workload(pod.Name)
		sib.Job = pod.Namespace + "/" + owner
	case slurmJob != "":
		sib.Job = "slurm/" + slurmJob
	default:
		return sib
	}
	from := at - int64(s.cfg.Window)
	for _, g := range h.gpus {
		if g == self || !s.alive(g, at) {
			continue
		}
		held := false
		for _, p := range g.procs {
			in := &p.info
			mine := in.SlurmJob == slurmJob && slurmJob != "" && owner == ""
			if owner != "" {
				mine = in.Namespace == pod.Namespace && in.PodName != "" && k8sname.Workload(in.PodName) == owner
			}
			if pt, ok := valueAt(&p.s, at); mine && ok && pt.T >= from && pt.V > 0 {
				held = true
				break
			}
		}
		if !held {
			continue
		}
		f := usedFraction(g, at)
		if f < 0 {
			continue
		}
		if sib.N == 0 || f < sib.Min {
			sib.Min = f
		}
		if sib.N == 0 || f > sib.Max {
			sib.Max = f
		}
		sib.N++
	}
	return sib
}

// usedFraction is the GPU's used/total at at, -1 when either is unknown.
func usedFraction(g *gpu, at int64) float64 {
	used, ok1 := valueAt(&g.gauges[Used], at)
	total, ok2 := valueAt(&g.gauges[Total], at)
	if !ok1 || !ok2 || total.V <= 0 {
		return -1
	}
	return float64(used.V) / float64(total.V)
}

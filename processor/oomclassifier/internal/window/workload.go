package window

import "github.com/gpumem/otelcol-gpumem/internal/k8sname"

// WorkloadPeak is what the window knows of the failing pod's workload (namespace, owner
// name, container: k8sname.Key) on its host: the baseline the shipped recording rules keep
// over days, seen over the window. Peaks are of one process on one GPU, the unit per-process
// points report and the failing process is compared in.
type WorkloadPeak struct {
	Known bool // the pod's namespace, name and container are known; the rest is read only then
	// Peak is the most one process of another pod of the workload held; -1 when no other pod
	// of it has points in the window.
	Peak    int64
	PeakPod string // that pod's name
	PeakT   int64  // when (Unix nanoseconds)
	Pods    int    // other pods of the workload seen, counted up to maxWorkloadPods
	// OwnPeak is the most one process of the failing pod's container held in the window up to
	// the OOM, on any GPU; -1 when none.
	OwnPeak int64
	// Now is what the failing process (Match.FailingPID) held at the OOM; -1 when unknown.
	Now int64
}

// maxWorkloadPods bounds the distinct pods counted (kept on the stack); beyond it the
// count reads "at least".
const maxWorkloadPods = 8

// workloadPeak scans the host's processes of the pod's workload between from and at. Only
// the workload's own series are decoded, so a record without names costs nothing.
func (s *Store) workloadPeak(h *host, pod *PodRef, from, at int64) WorkloadPeak {
	w := WorkloadPeak{Peak: -1, OwnPeak: -1, Now: -1}
	if pod.Namespace == "" || pod.Name == "" || pod.Container == "" {
		return w
	}
	w.Known = true
	owner := k8sname.Workload(pod.Name)
	var seen [maxWorkloadPods]string
	for _, g := range h.gpus {
		for _, p := range g.procs {
			in := &p.info
			if in.Namespace != pod.Namespace || in.Container != pod.Container || in.PodName == "" ||
				k8sname.Workload(in.PodName) != owner {
				continue
			}
			pt, ok := p.peak.between(&p.s, from, at)
			if !ok {
				continue
			}
			if pod.samePod(in.PodUID, in.Namespace, in.PodName) {
				w.OwnPeak = max(w.OwnPeak, pt.V)
				continue
			}
			// Ties go to the earliest, then the first pod by name: map order must not
			// change the sentence.
			if pt.V > w.Peak || (pt.V == w.Peak && (pt.T < w.PeakT || (pt.T == w.PeakT && in.PodName < w.PeakPod))) {
				w.Peak, w.PeakPod, w.PeakT = pt.V, in.PodName, pt.T
			}
			if w.Pods < maxWorkloadPods && !contains(seen[:w.Pods], in.PodName) {
				seen[w.Pods] = in.PodName
				w.Pods++
			}
		}
	}
	return w
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// maxBetween returns the largest point with from <= t <= to (the latest of equals, as peak keeps it).
func (s *series) maxBetween(from, to int64) (Point, bool) {
	if !s.has || to < s.start.t || from > s.last.t {
		return Point{}, false
	}
	var best Point
	found := false
	st := s.seek(from - 1)
	r := bitReader{buf: s.buf[:cap(s.buf)]}
	for end := s.last.bit; ; r.decode(&st) {
		if st.t > to {
			break
		}
		if st.t >= from && (!found || st.v >= best.V) {
			best, found = Point{st.t, st.v}, true
		}
		if st.bit >= end {
			break
		}
	}
	return best, found
}

// nilIfEmpty keeps an unreused Snapshot's reading of an empty list: nil, "none".
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

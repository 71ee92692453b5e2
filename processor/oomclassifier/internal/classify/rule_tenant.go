package classify

import "fmt"

// ruleOtherTenant holds when processes outside the failing process's workload (another
// container, pod, or executable) hold a large share of the GPU: at least
// TenantMinFraction × total, or at least the request (and TenantMinBytes) so that without
// them the request would have fit.
func ruleOtherTenant(f *facts) verdict {
	g := f.gpu
	if g == nil || f.total <= 0 || len(g.Processes) < 2 {
		return verdict{}
	}
	anchor, complete := f.failing, f.failingBy == "pid"
	if anchor == nil {
		anchor = largestWorkload(g.Processes)
	}
	var outside int64
	var biggest *Process
	n := 0
	for i := range g.Processes {
		p := &g.Processes[i]
		if p == anchor || p.Bytes <= 0 || sameWorkload(p, anchor) {
			continue
		}
		outside += p.Bytes
		n++
		if biggest == nil || p.Bytes > biggest.Bytes {
			biggest = p
		}
	}
	if biggest == nil {
		return verdict{}
	}
	req := f.oom.RequestedBytes
	large := float64(outside) >= f.th.TenantMinFraction*float64(f.total)
	blocking := req > 0 && outside >= req && outside >= f.th.TenantMinBytes &&
		(f.free < 0 || f.free+outside >= req)
	if !large && !blocking {
		return verdict{}
	}
	where := "outside the failing " + workloadNoun(f.failing)
	if f.failing == nil {
		where = "outside the largest workload (the failing process was not identified)"
	}
	var ev string
	if n == 1 {
		ev = fmt.Sprintf("%s had %s (%s of %s) used by %s %s",
			gpuName(g), humanBytes(outside), percent(outside, f.total), humanBytes(f.total), describeProcess(biggest), where)
	} else {
		ev = fmt.Sprintf("%s had %s (%s of %s) used by %d processes %s, the largest %s with %s",
			gpuName(g), humanBytes(outside), percent(outside, f.total), humanBytes(f.total), n, where,
			describeProcess(biggest), humanBytes(biggest.Bytes))
	}
	ev += reconcileClause(g, biggest)
	return verdict{holds: true, evidence: ev + shortfallClause(f), complete: complete, explains: outside}
}

// describeWorkload names a workload: its container or pod, else its executable.
func describeWorkload(p *Process) string {
	switch {
	case p.ContainerID != "":
		return "container " + shortID(p.ContainerID)
	case p.PodUID != "":
		return "pod " + shortID(p.PodUID)
	case p.Name != "":
		return p.Name
	default:
		return "pid " + fmt.Sprint(p.PID)
	}
}

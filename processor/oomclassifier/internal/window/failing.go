package window

// The record's own process on the matched GPU, for a record that names a pod.

// failing finds the record's process among the matched GPU's processes (Match.FailingPID).
func (m *Match) failing(pid int, procs []Process) *Process {
	if !m.Pod.Known() {
		return nil
	}
	switch m.By {
	case MatchedByPID:
	case MatchedByVPID:
		pid = m.HostPID
	default:
		pid = -1
	}
	var found *Process
	for i := range procs {
		p := &procs[i]
		if ok, _ := m.Pod.holds(&p.ProcessInfo); !ok {
			continue
		}
		if p.PID == pid {
			return p
		}
		if found != nil && pid < 0 {
			return nil // several processes of the pod: which one failed is not known
		}
		found = p
	}
	if pid >= 0 {
		return nil
	}
	return found
}

// failingSeries gives p, the process a pod's record was found to be, its series: processes
// copied only the series of the query's pid, which a pod's record does not know. The one
// array kept for reuse serves it unless the query's pid already took it.
func (s *Store) failingSeries(snap *Snapshot, g *gpu, p *Process, from, at int64) {
	for i := range snap.Processes {
		if snap.Processes[i].Series != nil {
			return
		}
	}
	if gp := g.procs[p.PID]; gp != nil {
		if ps := gp.s.appendBetween(snap.series[:0], from, at); ps != nil {
			snap.series, p.Series = ps, ps
		}
	}
}

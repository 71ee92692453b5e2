package window

import "time"

// Readings are the points of one GPU around a moment that an OOM message's own figures can be
// compared with (the processor's log clock check): its free memory and one process's bytes.
type Readings struct {
	Free    []Point // nvidia.gpu.memory.free
	Process []Point // the process's nvidia.gpu.process.memory.usage; empty when pid is unknown
}

// ReadingsTo fills dst with the points between from and to (both included) of GPU hwID of the
// host, reusing dst's arrays. It returns false when the host has no such GPU.
func (s *Store) ReadingsTo(dst *Readings, host, hwID string, pid int, from, to time.Time) bool {
	lo, hi := from.UnixNano(), to.UnixNano()
	dst.Free, dst.Process = dst.Free[:0], dst.Process[:0]
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[host]
	if h == nil {
		return false
	}
	g := h.gpus[hwID]
	if g == nil {
		return false
	}
	if ps := g.gauges[Free].appendBetween(dst.Free, lo, hi); ps != nil {
		dst.Free = ps
	}
	if p := g.procs[pid]; p != nil && pid >= 0 {
		if ps := p.s.appendBetween(dst.Process, lo, hi); ps != nil {
			dst.Process = ps
		}
	}
	return true
}

// Present returns the point of ps (sorted by time) in the collection at t: within
// presenceSlack of it, the window's rule for a process alive at a moment.
func Present(ps []Point, t int64) (Point, bool) {
	i := searchPoints(ps, t-int64(presenceSlack))
	if i < len(ps) && ps[i].T <= t+int64(presenceSlack) {
		best := ps[i]
		for j := i + 1; j < len(ps) && ps[j].T <= t+int64(presenceSlack); j++ {
			if abs(ps[j].T-t) < abs(best.T-t) {
				best = ps[j]
			}
		}
		return best, true
	}
	return Point{}, false
}

// searchPoints returns the index of the first point at or after t.
func searchPoints(ps []Point, t int64) int {
	lo, hi := 0, len(ps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps[m].T < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

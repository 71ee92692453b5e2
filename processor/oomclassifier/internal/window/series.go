package window

import "sort"

// point is one sample: the data point's own timestamp (Unix nanoseconds) and its value.
// 16 bytes, so 15 minutes at 1 s of ten series stays near 150 KB per GPU.
type point struct {
	t int64
	v int64
}

// series holds the points of one metric stream sorted by timestamp. Points almost always arrive
// in order, so the common case is an append; out-of-order points are inserted in place and a
// point at an existing timestamp replaces the value there (a duplicate, not a new sample).
type series struct {
	pts []point
	// step marks state-like streams (capacity, retired pages, flags): an in-order point equal to
	// the last one adds nothing, because the value is understood to hold until it changes.
	step bool
}

// add records a point and reports whether it was stored (false only for a redundant step value).
func (s *series) add(t, v int64) bool {
	n := len(s.pts)
	if n == 0 || t > s.pts[n-1].t {
		if s.step && n > 0 && s.pts[n-1].v == v {
			return false
		}
		s.pts = append(s.pts, point{t, v})
		return true
	}
	i := sort.Search(n, func(i int) bool { return s.pts[i].t >= t })
	if i < n && s.pts[i].t == t {
		s.pts[i].v = v
		return true
	}
	s.pts = append(s.pts, point{})
	copy(s.pts[i+1:], s.pts[i:])
	s.pts[i] = point{t, v}
	return true
}

// trim drops points older than cutoff, keeping the last one before it as the baseline that
// tells what the value was at the start of the window.
func (s *series) trim(cutoff int64) {
	n := len(s.pts)
	if n < 2 || s.pts[1].t >= cutoff {
		return
	}
	i := sort.Search(n, func(i int) bool { return s.pts[i].t >= cutoff })
	s.drop(i - 1)
}

// drop removes the first k points. Re-slicing leaves the dropped prefix unreachable once the
// next append outgrows the array and reallocates at about twice the live length, so a sliding
// series holds at most a few times its live points without copying on every trim.
func (s *series) drop(k int) {
	if k > 0 {
		s.pts = s.pts[k:]
	}
}

// at returns the latest point at or before t.
func (s *series) at(t int64) (point, bool) {
	i := sort.Search(len(s.pts), func(i int) bool { return s.pts[i].t > t })
	if i == 0 {
		return point{}, false
	}
	return s.pts[i-1], true
}

// newest returns the timestamp of the last point, or 0 when empty.
func (s *series) newest() int64 {
	if len(s.pts) == 0 {
		return 0
	}
	return s.pts[len(s.pts)-1].t
}

// between returns the points with from <= t <= to, in order, as a view into the series (callers
// copy before releasing the store's lock).
func (s *series) between(from, to int64) []point {
	lo := sort.Search(len(s.pts), func(i int) bool { return s.pts[i].t >= from })
	hi := sort.Search(len(s.pts), func(i int) bool { return s.pts[i].t > to })
	if lo >= hi {
		return nil
	}
	return s.pts[lo:hi]
}

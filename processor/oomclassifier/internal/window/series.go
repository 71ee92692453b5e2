package window

import "sort"

// Point is one sample: the data point's own timestamp (Unix nanoseconds) and its value.
// 16 bytes and pointer-free, so 15 minutes at 1 s of ten series stays near 150 KB per GPU,
// the collector never scans it, and a Snapshot copies a series with one memmove.
type Point struct {
	T int64 // Unix nanoseconds
	V int64
}

// series holds the points of one metric stream sorted by timestamp. Points almost always arrive
// in order, so the common case is an append; out-of-order points are inserted in place and a
// point at an existing timestamp replaces the value there (a duplicate, not a new sample).
type series struct {
	pts []Point // the live points: a window into arr, past the dropped ones
	arr []Point // the whole array, kept so that push can reuse the dropped prefix
	// step marks state-like streams (capacity, retired pages, flags): an in-order point equal to
	// the last one adds nothing, because the value is understood to hold until it changes.
	step bool
}

// add records a point and reports whether it was stored (false only for a redundant step value).
func (s *series) add(t, v int64) bool {
	n := len(s.pts)
	if n == 0 || t > s.pts[n-1].T {
		if s.step && n > 0 && s.pts[n-1].V == v {
			return false
		}
		s.push(Point{t, v})
		return true
	}
	i := sort.Search(n, func(i int) bool { return s.pts[i].T >= t })
	if i < n && s.pts[i].T == t {
		s.pts[i].V = v
		return true
	}
	s.push(Point{})
	copy(s.pts[i+1:], s.pts[i:])
	s.pts[i] = Point{t, v}
	return true
}

// trim drops points older than cutoff, keeping the last one before it as the baseline that
// tells what the value was at the start of the window.
func (s *series) trim(cutoff int64) {
	n := len(s.pts)
	if n < 2 || s.pts[1].T >= cutoff {
		return
	}
	// Trims run every 1/64 of the window, so the cut is a few points from the front: walking
	// to it reads a cache line or two, where a binary search over the whole array would touch
	// a line per probe. A series far behind (a GPU silent for a while) is searched instead.
	i := 2 // pts[1] is before the cutoff
	for ; i < n && s.pts[i].T < cutoff; i++ {
		if i == trimWalk {
			i += sort.Search(n-i, func(j int) bool { return s.pts[i+j].T >= cutoff })
			break
		}
	}
	s.drop(i - 1)
}

// trimWalk is how far trim walks before it searches.
const trimWalk = 64

// push appends p. A sliding series drops points at the front as fast as it appends them: when
// the array is full up to its end and the dropped prefix is at least half the live points,
// these move back to the array's start instead of into a new array. A series in its steady
// state therefore allocates nothing, copies each point about twice per window, and holds
// about 1.5 times its live points (the window's memory budget is per GPU).
func (s *series) push(p Point) {
	if n := len(s.pts); n == cap(s.pts) {
		if dropped := cap(s.arr) - n; dropped > 0 && dropped >= n/2 {
			copy(s.arr, s.pts) // memmove: the ranges may overlap
			s.pts = s.arr[:n]
		} else {
			s.arr = make([]Point, max(n+n/2, 4))
			s.pts = s.arr[:copy(s.arr, s.pts)]
		}
	}
	s.pts = append(s.pts, p)
}

// drop removes the first k points by re-slicing; push reclaims the space.
func (s *series) drop(k int) {
	if k > 0 {
		s.pts = s.pts[k:]
	}
}

// at returns the latest point at or before t.
func (s *series) at(t int64) (Point, bool) {
	i := sort.Search(len(s.pts), func(i int) bool { return s.pts[i].T > t })
	if i == 0 {
		return Point{}, false
	}
	return s.pts[i-1], true
}

// newest returns the timestamp of the last point, or 0 when empty.
func (s *series) newest() int64 {
	if len(s.pts) == 0 {
		return 0
	}
	return s.pts[len(s.pts)-1].T
}

// between returns the points with from <= t <= to, in order, as a view into the series (callers
// copy before releasing the store's lock).
func (s *series) between(from, to int64) []Point {
	lo := sort.Search(len(s.pts), func(i int) bool { return s.pts[i].T >= from })
	hi := sort.Search(len(s.pts), func(i int) bool { return s.pts[i].T > to })
	if lo >= hi {
		return nil
	}
	return s.pts[lo:hi]
}

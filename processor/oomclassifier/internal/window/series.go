package window

// Point is one sample: the data point's own timestamp (Unix nanoseconds) and its value.
type Point struct {
	T int64 // Unix nanoseconds
	V int64
}

// series holds the points of one metric stream sorted by timestamp, compressed the way
// time-series databases store samples (Gorilla, Pelkonen et al., VLDB 2015; Prometheus
// tsdb/chunkenc): each point after the first is a bit-packed timestamp residual and a value
// delta-of-delta (codec.go). GPU memory series are flat or ramping and collected on a fixed
// interval, so most points cost 1 bit of value plus the collection's timing jitter.
//
// Points almost always arrive in order, so the common case is an append; an out-of-order
// point is placed by re-encoding from the checkpoint before it, and a point at an existing
// timestamp replaces the value there (a duplicate, not a new sample).
type series struct {
	buf   []byte // the bit stream; bits before start.bit belong to dropped points
	start state  // the first live point and where the next one's bits begin
	last  state  // the newest point: the encoder appends after last.bit
	// tail trails last by tailLag to 2·tailLag points: a moment of the last few seconds (an
	// OOM just before the newest metrics) decodes at most 2·tailLag points from it.
	tail state
	// ck[ck0:] are decoder states every ckptEvery points after start, so that reading a
	// moment decodes at most that many points; ck[:ck0] are dropped ones whose room is reused.
	ck  []state
	ck0 int32
	// has says the series holds a point; the count follows from the first and last states.
	has bool
	// step marks state-like streams (capacity, retired pages, flags): an in-order point equal to
	// the last one adds nothing, because the value is understood to hold until it changes.
	step bool
}

// tailLag is how far tail trails the newest point, at least.
const tailLag = 8

// ckptEvery bounds the points decoded to read one moment of a series older than tail (an OOM
// classified long after its metrics). A checkpoint costs 40 bytes, about 0.1 byte per point
// at this spacing; reading such a moment decodes 192 points on average (about 1 µs).
const ckptEvery = 384

// len returns the number of live points.
func (s *series) len() int {
	if !s.has {
		return 0
	}
	return int(s.last.idx - s.start.idx + 1)
}

// footprint is the heap the series' arrays take, for the store's byte budget.
func (s *series) footprint() int64 {
	return int64(cap(s.buf)) + int64(cap(s.ck))*stateSize
}

// ckpts returns the live checkpoints.
func (s *series) ckpts() []state { return s.ck[s.ck0:] }

// add records a point and reports whether it was stored (false only for a redundant step value).
func (s *series) add(t, v int64) bool {
	switch {
	case !s.has:
		s.reset(Point{t, v})
		return true
	case t > s.last.t:
		if s.step && s.last.v == v {
			return false
		}
		s.appendPoint(t, v)
		return true
	case t == s.last.t && v == s.last.v:
		return true // a repeat of the newest point, as a retried batch sends
	case t == s.last.t && s.len() == 1:
		s.reset(Point{t, v})
		return true
	}
	s.insert(t, v)
	return true
}

// reset makes p the only point.
func (s *series) reset(p Point) {
	s.buf = s.buf[:0]
	s.start = state{t: p.T, v: p.V}
	s.last, s.tail = s.start, s.start
	s.has = true
	s.ck, s.ck0 = s.ck[:0], 0
}

// appendPoint encodes a point after last; t > last.t.
func (s *series) appendPoint(t, v int64) {
	s.reserve(maxPointBytes + 8) // 8 more: the reader loads a word past the last point
	w := bitWriter{buf: s.buf, bit: s.last.bit}
	s.last = w.encode(s.last, t, v)
	s.buf = w.buf
	if s.last.idx-s.tail.idx >= 2*tailLag {
		r := bitReader{buf: s.buf[:cap(s.buf)]}
		for range tailLag {
			r.decode(&s.tail)
		}
	}
	base := s.start.idx
	if cks := s.ckpts(); len(cks) > 0 {
		base = cks[len(cks)-1].idx
	}
	if s.last.idx-base >= ckptEvery {
		s.pushCheckpoint(s.last)
	}
}

// reserve makes room for n more bytes at the end of buf. When the array is full, the bytes of
// dropped points at its front are reclaimed with one memmove before growing it, so a series
// sliding through its window allocates nothing once warm and holds little beyond its points.
func (s *series) reserve(n int) {
	if len(s.buf)+n <= cap(s.buf) {
		return
	}
	if off := s.start.bit / 8; off > 0 && len(s.buf)-int(off)+n <= cap(s.buf) {
		s.buf = s.buf[:copy(s.buf, s.buf[off:])]
		s.shiftBits(off * 8)
		return
	}
	off := s.start.bit / 8
	// Grow by a 32nd rather than append's quarter: a window's series is long-lived and its
	// size steady, so slack is memory held for nothing, while the reclaim above makes a small
	// slack cheap (one memmove of the series per 32nd of the window). append rounds the
	// capacity up to the allocator's size class, which would be held anyway.
	live := len(s.buf) - int(off)
	nb := append([]byte(nil), make([]byte, live+n+live/32)...)[:live]
	copy(nb, s.buf[off:])
	s.buf = nb
	s.shiftBits(off * 8)
}

func (s *series) shiftBits(by uint32) {
	if by == 0 {
		return
	}
	s.start.bit -= by
	s.last.bit -= by
	s.tail.bit -= by
	for i := range s.ck {
		s.ck[i].bit -= by
	}
}

func (s *series) pushCheckpoint(st state) {
	if len(s.ck) == cap(s.ck) {
		if s.ck0 > 0 {
			s.ck = s.ck[:copy(s.ck, s.ck[s.ck0:])]
			s.ck0 = 0
		} else { // a window holds a few: grow exactly
			s.ck = append(make([]state, 0, len(s.ck)+1), s.ck...)
		}
	}
	s.ck = append(s.ck, st)
}

// insert places a point at or before last.t: the stream after the newest checkpoint (or
// tail) before t is decoded, the point merged in, and that part encoded again. Rare (a late
// batch), and bounded by ckptEvery plus the points after t.
func (s *series) insert(t, v int64) {
	from := s.start
	cks := s.ckpts()
	k := len(cks)
	for k > 0 && cks[k-1].t >= t {
		k--
	}
	if k > 0 {
		from = cks[k-1]
	}
	if s.tail.t < t && s.tail.idx > from.idx {
		from = s.tail // a point a few seconds late re-encodes a few points, not a checkpoint's worth
	}
	var scratch [32]Point // a point a few seconds late merges without allocating
	tail := scratch[:0]
	if t > from.t {
		tail = append(tail, Point{from.t, from.v})
	}
	it := s.iterFrom(from)
	for it.next() {
		tail = append(tail, it.point())
	}
	if t <= from.t {
		// Before or at the first live point: the series is rebuilt from the new point on.
		all := []Point{{from.t, from.v}}
		all = append(all, tail...)
		tail = all
	}
	tail = mergePoint(tail, Point{t, v})
	if k > 0 || t > from.t {
		// Keep the stream up to from (a checkpoint, or the first point), drop what follows.
		s.truncate(from)
		s.ck = s.ck[:int(s.ck0)+k]
		for _, p := range tail[1:] {
			s.appendPoint(p.T, p.V)
		}
		return
	}
	s.reset(tail[0])
	for _, p := range tail[1:] {
		s.appendPoint(p.T, p.V)
	}
}

// mergePoint inserts p into the sorted points, replacing one at the same timestamp.
func mergePoint(ps []Point, p Point) []Point {
	i := 0
	for i < len(ps) && ps[i].T < p.T {
		i++
	}
	if i < len(ps) && ps[i].T == p.T {
		ps[i] = p
		return ps
	}
	ps = append(ps, Point{})
	copy(ps[i+1:], ps[i:])
	ps[i] = p
	return ps
}

// truncate drops every point after st, a state of the stream (the writer overwrites the
// bits after it).
func (s *series) truncate(st state) {
	s.buf = s.buf[:(st.bit+7)/8]
	s.last = st
	if s.tail.idx > st.idx {
		s.tail = st
	}
}

// trim drops points older than cutoff, keeping the last one before it as the baseline that
// tells what the value was at the start of the window.
func (s *series) trim(cutoff int64) {
	if s.len() < 2 || s.start.t >= cutoff {
		return
	}
	// Skip whole checkpoints first: a series far behind is not decoded from its start.
	for cks := s.ckpts(); len(cks) > 0 && cks[0].t < cutoff; cks = s.ckpts() {
		s.advanceTo(cks[0])
	}
	it := s.iterFrom(s.start)
	for it.next() && it.st.t < cutoff {
		s.start = it.st
	}
	s.moved()
}

// moved follows a move of start: tail is never behind it.
func (s *series) moved() {
	if s.tail.idx < s.start.idx {
		s.tail = s.start
	}
}

// advanceTo moves the first live point to the checkpoint ck, ckpts[0].
func (s *series) advanceTo(ck state) {
	s.start = ck
	s.moved()
	s.ck0++
}

// drop removes the first k points.
func (s *series) drop(k int) {
	if k <= 0 {
		return
	}
	if k >= s.len() {
		*s = series{buf: s.buf[:0], ck: s.ck[:0], step: s.step}
		return
	}
	target := s.start.idx + uint32(k)
	for cks := s.ckpts(); len(cks) > 0 && cks[0].idx <= target; cks = s.ckpts() {
		s.advanceTo(cks[0])
	}
	it := s.iterFrom(s.start)
	for s.start.idx < target && it.next() {
		s.start = it.st
	}
	s.moved()
}

// first returns the oldest live point; the series must not be empty.
func (s *series) first() Point { return Point{s.start.t, s.start.v} }

// at returns the latest point at or before t.
func (s *series) at(t int64) (Point, bool) {
	switch {
	case !s.has || t < s.start.t:
		return Point{}, false
	case t >= s.last.t:
		return Point{s.last.t, s.last.v}, true
	}
	it := s.iterFrom(s.seek(t))
	p := it.point()
	for it.next() && it.st.t <= t {
		p = it.point()
	}
	return p, true
}

// seek returns the newest state at or before t to decode from (start when none).
func (s *series) seek(t int64) state {
	cks := s.ckpts()
	lo, hi := 0, len(cks)
	for lo < hi {
		if m := (lo + hi) / 2; cks[m].t <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	best := s.start
	if lo > 0 {
		best = cks[lo-1]
	}
	if s.tail.t <= t && s.tail.idx > best.idx {
		best = s.tail
	}
	return best
}

// newest returns the timestamp of the last point, or 0 when empty.
func (s *series) newest() int64 {
	if !s.has {
		return 0
	}
	return s.last.t
}

// appendBetween appends the points with from <= t <= to, in order, to dst; it returns nil
// when there are none.
func (s *series) appendBetween(dst []Point, from, to int64) []Point {
	if !s.has || to < s.start.t || from > s.last.t {
		return nil
	}
	n0 := len(dst)
	st := s.seek(from - 1)
	r := bitReader{buf: s.buf[:cap(s.buf)]}
	for end := s.last.bit; ; r.decode(&st) {
		if st.t > to {
			break
		}
		if st.t >= from {
			dst = append(dst, Point{st.t, st.v})
		}
		if st.bit >= end {
			break
		}
	}
	if len(dst) == n0 {
		return nil
	}
	return dst
}

// any reports whether a point lies in [from, to].
func (s *series) any(from, to int64) bool {
	if !s.has || to < s.start.t || from > s.last.t {
		return false
	}
	p, ok := s.at(to)
	return ok && p.T >= from
}

// iterFrom returns an iterator positioned at st; next() moves to the following point.
func (s *series) iterFrom(st state) iter {
	return iter{r: bitReader{buf: s.buf[:cap(s.buf)]}, st: st, end: s.last.bit}
}

// iter walks a series' points from a state.
type iter struct {
	r   bitReader
	st  state
	end uint32
}

func (it *iter) point() Point { return Point{it.st.t, it.st.v} }

// next decodes the point after the current one; false at the end.
func (it *iter) next() bool {
	if it.st.bit >= it.end {
		return false
	}
	it.r.decode(&it.st)
	return true
}

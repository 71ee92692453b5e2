package window

import (
	"encoding/binary"
	"math/bits"
)

// The codec of a series' bit stream. Each point after the first is written as
//
//	time:  the interval's residual r = (t − t_prev) − round_ms(t_prev − t_prevprev)
//	       '0' r = 0 | '10' + 20 bits | '110' + 27 bits | '1110' + 37 bits | '1111' + 64 bits
//	value: the delta-of-delta d = (v − v_prev) − (v_prev − v_prevprev)
//	       '0' d = 0 | '1' + 6 bits trailing zeros z + 6 bits length l + the l−1 low bits of
//	       zigzag(d >> z) (its top bit is implied)
//
// The time code is Gorilla's delta-of-delta, predicting the interval from the last one rounded
// to the millisecond: a collector stamps each collection when its ticker fires, tens to
// hundreds of microseconds late, so on a 1 s interval the residual is the difference of two
// jitters (under 2^19 ns = 524 µs in the 20-bit bucket), and exactly 0 for data stamped on the
// interval. Timestamps are kept to the nanosecond: the window answers at the points' own times.
//
// The value code is delta-of-delta rather than Gorilla's XOR of floats: the values are integer
// bytes, flat (d = 0) or ramping at a steady rate (d = 0 again); allocators move memory in
// blocks (2 MiB in PyTorch's caching allocator), which the trailing-zero count strips.
// Arithmetic wraps: encode and decode wrap alike, so any int64 round-trips.
//
// Hand-written rather than github.com/prometheus/prometheus/tsdb/chunkenc (the well-kept
// Gorilla implementation): its XOR chunk stores float64 values XORed, which costs ramps
// many bits where a delta-of-delta costs one; its largest timestamp bucket below 64 bits
// takes |dod| ≤ 2^19, so nanosecond timestamps with half a millisecond of jitter fall into
// the 64-bit case about half the time; it appends in order only (late points need a second
// head); and the root module would take on the whole prometheus module for one file.

// state is where a decoder (or the encoder) stands: the point just read and the deltas that
// led to it, the bit where the next point begins, and the point's index since the series
// was reset (so that counts follow from two states).
type state struct {
	t, v   int64
	dt, dv int64 // t − t_prev, v − v_prev; 0 at the first point
	bit    uint32
	idx    uint32
}

// stateSize is unsafe.Sizeof(state{}), for the byte budget.
const stateSize = 40

// maxPointBytes bounds one point's encoding: 4+64 time bits and 13+63 value bits.
const maxPointBytes = 19

// predict is the interval expected after one of dt: dt to the nearest millisecond.
func predict(dt int64) int64 {
	const ms = 1e6
	return (dt + ms/2) / ms * ms
}

type bitWriter struct {
	buf []byte
	bit uint32 // bits written; buf holds (bit+7)/8 bytes
}

// write appends the low n bits of x, most significant first. The series keeps 8 bytes of
// room past the stream (reserve), so the bits go in with one 8-byte load and store; the bits
// past the end may hold stale bytes, which are masked, overwritten later, and never read.
func (w *bitWriter) write(x uint64, n uint) {
	if n > 56 {
		w.write(x>>32, n-32)
		w.write(x, 32)
		return
	}
	if n == 0 {
		return
	}
	b := w.buf[:cap(w.buf)]
	i, sh := w.bit/8, uint(w.bit%8)
	word := binary.BigEndian.Uint64(b[i:])
	mask := ^uint64(0) << (64 - n) >> sh
	word = word&^mask | x<<(64-n)>>sh
	binary.BigEndian.PutUint64(b[i:], word)
	w.bit += uint32(n)
	w.buf = b[:(w.bit+7)/8]
}

// encode writes the point (t, v) after st and returns the state at it.
func (w *bitWriter) encode(st state, t, v int64) state {
	dt := t - st.t
	r := dt - predict(st.dt)
	switch {
	case r == 0:
		w.write(0, 1)
	case -1<<19 <= r && r < 1<<19:
		w.write(0b10, 2)
		w.write(uint64(r), 20)
	case -1<<26 <= r && r < 1<<26:
		w.write(0b110, 3)
		w.write(uint64(r), 27)
	case -1<<36 <= r && r < 1<<36:
		w.write(0b1110, 4)
		w.write(uint64(r), 37)
	default:
		w.write(0b1111, 4)
		w.write(uint64(r), 64)
	}
	dv := v - st.v
	if d := dv - st.dv; d == 0 {
		w.write(0, 1)
	} else {
		z := uint(bits.TrailingZeros64(uint64(d)))
		m := d >> z
		zz := uint64(m<<1) ^ uint64(m>>63)
		l := uint(bits.Len64(zz))
		w.write(1, 1)
		w.write(uint64(z), 6)
		w.write(uint64(l-1), 6)
		w.write(zz, l-1)
	}
	return state{t: t, v: v, dt: dt, dv: dv, bit: w.bit, idx: st.idx + 1}
}

// bitReader reads a series' stream. buf is the stream's whole array (up to its capacity):
// the series keeps 8 bytes of room after its last point, so a word can be loaded at any bit
// of the stream with one load; bits past the last point are never used.
type bitReader struct {
	buf []byte
}

// word returns the 64 bits from bit pos, of which at least the first 57 are the stream's.
func (r *bitReader) word(pos uint32) uint64 {
	i := int(pos / 8)
	if i+8 <= len(r.buf) {
		return binary.BigEndian.Uint64(r.buf[i:]) << (pos % 8)
	}
	var w uint64
	for k := 0; k < 8; k++ {
		w <<= 8
		if i+k < len(r.buf) {
			w |= uint64(r.buf[i+k])
		}
	}
	return w << (pos % 8)
}

// read returns n (<= 64) bits starting at bit pos.
func (r *bitReader) read(pos uint32, n uint) uint64 {
	if n > 56 {
		hi := r.read(pos, n-32)
		return hi<<32 | r.read(pos+uint32(n-32), 32)
	}
	return r.word(pos) >> (64 - n) & (1<<n - 1) // n = 0 gives 0: Go shifts past 63 to 0
}

// decode moves st to the point after it, in place. The common point (a time residual of 20 bits or less, a
// value delta-of-delta of 0 or a few bits) costs two word loads.
func (r *bitReader) decode(st *state) {
	pos := st.bit
	w := r.word(pos)
	var res int64
	switch {
	case w>>63 == 0:
		pos++
	case w>>62 == 0b10:
		res = int64(w<<2) >> (64 - 20)
		pos += 2 + 20
	case w>>61 == 0b110:
		res = int64(w<<3) >> (64 - 27)
		pos += 3 + 27
	case w>>60 == 0b1110:
		res = int64(w<<4) >> (64 - 37)
		pos += 4 + 37
	default:
		res = int64(r.read(pos+4, 64))
		pos += 4 + 64
	}
	dt := predict(st.dt) + res
	dv := st.dv
	if w = r.word(pos); w>>63 == 0 {
		pos++
	} else {
		z := uint(w >> 57 & 63)
		l1 := uint(w >> 51 & 63) // l − 1 bits follow, the top bit of zigzag(m) implied
		var low uint64
		if l1 <= 57-13 {
			low = w << 13 >> (64 - l1)
		} else {
			low = r.read(pos+13, l1)
		}
		zz := uint64(1)<<l1 | low
		pos += 13 + uint32(l1)
		m := int64(zz>>1) ^ -int64(zz&1)
		dv += m << z
	}
	st.t += dt
	st.v += dv
	st.dt, st.dv, st.bit = dt, dv, pos
	st.idx++
}

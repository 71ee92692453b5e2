package window

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSteadyCadenceCostsTwoBits: the codec's promise for the common series. Points stamped
// exactly on the interval with a flat or steadily ramping value cost one time bit and one
// value bit; collection jitter under half a millisecond costs the 20-bit bucket, no more.
func TestSteadyCadenceCostsTwoBits(t *testing.T) {
	const n = 1000
	var flat, ramp, jittered series
	for i := int64(0); i < n; i++ {
		at := sec(int(i))
		flat.add(at, 40*gib)
		ramp.add(at, i*2<<20)
		jittered.add(at+(i%3)*150_000, 40*gib) // 0, 150 or 300 µs late
	}
	// The first interval and delta have no predecessor and are written in full: 8 bytes.
	bytesFor := func(bitsPerPoint int) int { return ((n-1)*bitsPerPoint+7)/8 + 8 }
	assert.LessOrEqual(t, len(flat.buf), bytesFor(2), "flat")
	assert.LessOrEqual(t, len(ramp.buf), bytesFor(2), "ramp")
	assert.LessOrEqual(t, len(jittered.buf), bytesFor(2+20+1), "jittered")
	for _, s := range []*series{&flat, &ramp, &jittered} {
		require.Equal(t, n, s.len())
	}
	assert.Equal(t, Point{sec(999), 999 * 2 << 20}, Point{ramp.last.t, ramp.last.v})
}

// TestCodecBucketEdges: time residuals and value delta-of-deltas at the edges of each code's
// range (the largest that fits, the smallest that does not) decode to what was encoded.
func TestCodecBucketEdges(t *testing.T) {
	residuals := []int64{0, 1, -1, 1<<19 - 1, -1 << 19, 1 << 19, -1<<19 - 1, 1<<26 - 1, -1 << 26,
		1 << 26, -1<<26 - 1, 1<<36 - 1, -1 << 36, 1 << 36, -1<<36 - 1, 1 << 50}
	dods := []int64{0, 1, -1, 2, 1 << 20, 1<<43 - 1, 1 << 43, 1<<44 - 1, 1 << 44, 1<<45 + 1, -1 << 44, -1<<45 - 3, 1<<62 + 1}
	var s series
	var want []Point
	tt, dt := sec(0), int64(1e9)
	v, dv := int64(0), int64(0)
	add := func() {
		s.add(tt, v)
		want = append(want, Point{tt, v})
	}
	add()
	for i := 0; i < 3*len(residuals)*len(dods); i++ {
		// A regular point between edges, so that each edge is coded against a 1 s prediction.
		r := residuals[i%len(residuals)]
		d := dods[(i/len(residuals)+i)%len(dods)]
		ndt := predict(dt) + r
		if ndt <= 0 {
			ndt = 1e9
		}
		tt += ndt
		dt = ndt
		dv += d
		v += dv
		add()
		tt += 1e9
		dt = 1e9
		add()
		dv = 0 // the regular point repeats v: the next edge is coded from a zero delta
	}
	require.Equal(t, want, all(&s))
	for i, p := range want {
		got, ok := s.at(p.T)
		require.True(t, ok)
		require.Equal(t, p, got, "point %d", i)
	}
}

// TestCheckpointedSeries: a series several checkpoints long answers a moment anywhere in it
// (before, at and after each checkpoint) from the checkpoints, and late points merged before,
// at and between checkpoints keep it equal to the plain sorted model.
func TestCheckpointedSeries(t *testing.T) {
	const n = 5*ckptEvery + 17
	var s series
	var m []Point
	for i := 0; i < n; i++ {
		p := Point{sec(i) + int64(i%5)*100_000, int64(i/7) << 21}
		if i == ckptEvery-1 { // a nanosecond before the first checkpoint
			p.T = sec(ckptEvery) + int64(ckptEvery%5)*100_000 - 1
		}
		s.add(p.T, p.V)
		m = append(m, p)
	}
	require.Len(t, s.ckpts(), 5)
	require.Equal(t, m[ckptEvery].T, s.ckpts()[0].t)
	// The byte budget counts the checkpoints too, at their real size.
	require.Equal(t, int64(unsafe.Sizeof(state{})), int64(stateSize))
	require.Equal(t, int64(cap(s.buf))+int64(cap(s.ck))*int64(unsafe.Sizeof(state{})), s.footprint())
	check := func(what string) {
		t.Helper()
		require.Equal(t, m, all(&s), what)
		for i := range m {
			for _, d := range []int64{-1, 0, 1} {
				q := m[i].T + d
				wp, wok := modelAt(m, q)
				gp, gok := s.at(q)
				require.Equal(t, wok, gok, "%s: at point %d%+d", what, i, d)
				require.Equal(t, wp, gp, "%s: at point %d%+d", what, i, d)
			}
		}
		from, to := m[ckptEvery-3].T, m[2*ckptEvery+3].T
		require.Equal(t, modelBetween(m, from, to), s.appendBetween(nil, from, to), what)
		// Ranges starting at, and a nanosecond before, each state a read starts from.
		for _, st := range append([]state{s.start, s.tail, s.last}, s.ckpts()...) {
			for _, from := range []int64{st.t - 1, st.t} {
				to := from + int64(20*time.Second)
				require.Equal(t, modelBetween(m, from, to), s.appendBetween(nil, from, to), "%s: from %d", what, from)
				require.Equal(t, len(modelBetween(m, from, to)) > 0, s.any(from, to), "%s: any from %d", what, from)
			}
			upTo := s.appendBetween(nil, st.t-int64(time.Hour), st.t)
			require.Equal(t, Point{st.t, st.v}, upTo[len(upTo)-1], "%s: a range ending at a state", what)
		}
		first := m[0]
		require.Equal(t, []Point{first}, s.appendBetween(nil, first.T-int64(time.Hour), first.T), "%s: a range ending at the first point", what)
		require.True(t, s.any(m[len(m)-1].T, m[len(m)-1].T), "%s: a range of the newest instant", what)
	}
	check("in order")
	// Each late point is placed against the checkpoints and tail as they stand when it comes.
	for _, late := range []func() Point{
		func() Point { return Point{m[100].T + 1, 1} },              // before the first checkpoint
		func() Point { return Point{s.ckpts()[1].t, 7 << 21} },      // at a checkpoint: replaces its value
		func() Point { return Point{s.ckpts()[1].t + 1, 3} },        // just after one
		func() Point { return Point{s.ckpts()[2].t - 1, 13 << 21} }, // just before one
		func() Point { return Point{m[0].T - 1, 9} },                // before the first point
		func() Point { return Point{m[0].T, 10} },                   // at the first point
		func() Point { return Point{s.tail.t, 11} },                 // at the tail
		func() Point { return Point{s.tail.t + 1, 12} },             // just after it
		func() Point { return Point{m[len(m)-2].T, 14} },            // at the point before the newest
	} {
		p := late()
		s.add(p.T, p.V)
		m = modelAdd(m, p, false)
		check("late point")
	}
	cut := m[3*ckptEvery].T + 1
	s.trim(cut)
	m = modelTrim(m, cut)
	check("trimmed past three checkpoints")
	assert.Equal(t, m[0], s.first())
}

// TestDropAcrossCheckpoints: the per-series cap drops exactly the oldest points asked for,
// whether the new first point is before, at or after a checkpoint.
func TestDropAcrossCheckpoints(t *testing.T) {
	var s series
	var m []Point
	for i := 0; i < 5*ckptEvery+17; i++ {
		p := Point{sec(i), int64(i%11) << 21}
		s.add(p.T, p.V)
		m = append(m, p)
	}
	for _, k := range []int{1, ckptEvery - 2, 1, 1, ckptEvery, ckptEvery + 1, 0} {
		s.drop(k)
		m = m[k:]
		require.Equal(t, len(m), s.len(), "after dropping %d", k)
		require.Equal(t, m[0], s.first(), "after dropping %d", k)
		require.Equal(t, m, all(&s), "after dropping %d", k)
	}
}

// TestSeriesGrowsWhileTrimmed: a series whose window is still widening grows its array while
// its front is trimmed; the bits after the dropped front must move with it.
func TestSeriesGrowsWhileTrimmed(t *testing.T) {
	var s series
	var m []Point
	for i := 0; i < 4000; i++ {
		// Noisy values (about 4 bytes a point) and a trim after each point: the front moves
		// by less than the array must grow, so it grows with dropped bytes at its front.
		p := Point{sec(i) + int64(i%7)*90_000, int64((i*i*7919)%1000003) << 3}
		s.add(p.T, p.V)
		m = append(m, p)
		cut := sec(i / 3)
		s.trim(cut)
		m = modelTrim(m, cut)
		if i%500 == 0 {
			require.Equal(t, m, all(&s), "point %d", i)
		}
	}
	require.Equal(t, m, all(&s))
}

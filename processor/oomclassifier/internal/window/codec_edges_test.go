package window

import (
	"testing"

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
		s.add(p.T, p.V)
		m = append(m, p)
	}
	require.Len(t, s.ckpts(), 5)
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
	}
	check("in order")
	for _, late := range []Point{
		{m[100].T + 1, 1},                // before the first checkpoint
		{m[ckptEvery].T, 7 << 21},        // at a checkpoint: replaces its value
		{m[ckptEvery+200].T - 1, 3},      // between checkpoints
		{m[4*ckptEvery+1].T + 1, 5},      // just after the last checkpoint
		{m[0].T - 1, 9},                  // before the first point
		{m[len(m)-2].T + 1, 11},          // within the tail
		{m[2*ckptEvery].T - 1, 13 << 21}, // just before a checkpoint
	} {
		s.add(late.T, late.V)
		m = modelAdd(m, late, false)
		check("late point")
	}
	cut := m[3*ckptEvery].T + 1
	s.trim(cut)
	m = modelTrim(m, cut)
	check("trimmed past three checkpoints")
	assert.Equal(t, m[0], s.first())
}

package window

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// all decodes every live point.
func all(s *series) []Point { return s.appendBetween(nil, math.MinInt64+1, math.MaxInt64) }

func ts(s *series) []int64 {
	var out []int64
	for _, p := range all(s) {
		out = append(out, p.T)
	}
	return out
}

func TestSeriesAddOrdersAndDeduplicates(t *testing.T) {
	var s series
	for _, tt := range []int64{10, 30, 20, 40, 5, 30} {
		s.add(tt, tt*10)
	}
	s.add(20, 7) // duplicate timestamp: replaces
	assert.Equal(t, []int64{5, 10, 20, 30, 40}, ts(&s))
	p, ok := s.at(25)
	assert.True(t, ok)
	assert.Equal(t, Point{20, 7}, p)
	_, ok = s.at(4)
	assert.False(t, ok)
}

func TestSeriesStepSkipsRepeats(t *testing.T) {
	s := series{step: true}
	assert.True(t, s.add(1, 5))
	assert.False(t, s.add(2, 5))
	assert.True(t, s.add(3, 6))
	assert.Equal(t, []int64{1, 3}, ts(&s))
	p, _ := s.at(2)
	assert.Equal(t, int64(5), p.V, "the value holds until it changes")
}

func TestSeriesTrimKeepsBaseline(t *testing.T) {
	var s series
	for i := int64(0); i < 10; i++ {
		s.add(i, i)
	}
	s.trim(5)
	assert.Equal(t, []int64{4, 5, 6, 7, 8, 9}, ts(&s), "4 stays as the value at the window's start")
	s.trim(5)
	assert.Equal(t, []int64{4, 5, 6, 7, 8, 9}, ts(&s))
	s.trim(100)
	assert.Equal(t, []int64{9}, ts(&s))
	s = series{}
	for i := int64(0); i < 10; i++ {
		s.add(i, i)
	}
	assert.Equal(t, []Point{{7, 7}, {8, 8}}, s.appendBetween(nil, 7, 8))
	assert.Nil(t, s.appendBetween(nil, 100, 200))
}

// TestSeriesSlidesInPlace: a series sliding through a fixed window keeps exactly its window,
// reuses its arrays once warm, and holds little more than its compressed points.
func TestSeriesSlidesInPlace(t *testing.T) {
	var s series
	const window = 100
	last := int64(-1)
	step := func() {
		last++
		s.add(last, last*10)
		s.trim(last - window)
	}
	for range 5 * window {
		step()
	}
	// Counted over all the steps (AllocsPerRun rounds an occasional reallocation down to
	// zero). Reallocating as it slides would take dozens; the slack is for the runtime's own.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 50 * window {
		step()
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.Mallocs-before.Mallocs, uint64(5), "a warm sliding series allocates")
	// last-window .. last, plus the baseline before the window's start.
	pts := all(&s)
	require.Len(t, pts, window+2)
	require.Equal(t, window+2, s.len())
	for i, p := range pts {
		want := last - window - 1 + int64(i)
		require.Equal(t, Point{want, want * 10}, p)
	}
	// 23 bits a point here (1 ns apart: a 20-bit time residual; a steady ramp: 1 value bit).
	assert.LessOrEqual(t, s.footprint(), int64(2*(window+2)*23/8+64))
	// Out-of-order points still land in place in the reused array.
	s.add(last+5, 2)
	s.add(last+3, 3)
	s.add(last-50, 4)
	assert.Equal(t, []int64{last - 1, last, last + 3, last + 5}, ts(&s)[s.len()-4:])
	p, _ := s.at(last - 50)
	assert.Equal(t, int64(4), p.V)
}

// TestSeriesTrimNearAndFar: cuts before, at and past checkpoints land alike.
func TestSeriesTrimNearAndFar(t *testing.T) {
	for _, cut := range []int64{1, 2, 3, ckptEvery - 1, ckptEvery, ckptEvery + 1, ckptEvery + 2, 2*ckptEvery + 1, 500, 998, 999, 1000, 5000} {
		var s series
		for i := int64(0); i < 1000; i++ {
			s.add(i, i)
		}
		s.trim(cut)
		want := min(cut, 1000) - 1 // the baseline: the last point before the cutoff
		pts := all(&s)
		assert.Equal(t, want, pts[0].T, "cutoff %d", cut)
		assert.Equal(t, want, s.first().T, "cutoff %d", cut)
		assert.Equal(t, int64(999), pts[len(pts)-1].T, "cutoff %d", cut)
		assert.Len(t, pts, s.len())
	}
}

package window

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func ts(s *series) []int64 {
	var out []int64
	for _, p := range s.pts {
		out = append(out, p.t)
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
	assert.Equal(t, point{20, 7}, p)
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
	assert.Equal(t, int64(5), p.v, "the value holds until it changes")
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
	assert.Equal(t, []point{{7, 7}, {8, 8}}, s.between(7, 8))
	assert.Nil(t, s.between(100, 200))
}

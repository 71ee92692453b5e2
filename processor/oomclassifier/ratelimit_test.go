package oomclassifier

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRateLimitLogsFirstThenCountsPerInterval(t *testing.T) {
	var r rateLimit
	n, ok := r.add("a", 2, t0)
	assert.True(t, ok)
	assert.Equal(t, 2, n)
	_, ok = r.add("a", 3, t0.Add(time.Second))
	assert.False(t, ok, "repeats within logEvery are only counted")
	_, ok = r.add("b", 1, t0.Add(time.Second))
	assert.True(t, ok, "keys are limited separately")
	_, ok = r.add("a", 4, t0.Add(logEvery-time.Nanosecond))
	assert.False(t, ok)
	n, ok = r.add("a", 5, t0.Add(logEvery))
	assert.True(t, ok)
	assert.Equal(t, 12, n, "the line carries every occurrence since the last one")
}

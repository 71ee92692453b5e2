package oomclassifier

import (
	"sync"
	"time"
)

// logEvery is the most often one condition is logged; the counters carry every occurrence.
const logEvery = time.Minute

// rateLimit turns a repeated condition into one log line per logEvery per key, carrying the
// count since the previous line. The first occurrence logs at once.
type rateLimit struct {
	mu      sync.Mutex
	last    map[string]time.Time
	pending map[string]int
}

// add counts n occurrences of key at now and reports whether to log, with the count to log.
func (r *rateLimit) add(key string, n int, now time.Time) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last, r.pending = make(map[string]time.Time), make(map[string]int)
	}
	r.pending[key] += n
	if last, seen := r.last[key]; seen && now.Sub(last) < logEvery {
		return 0, false
	}
	total := r.pending[key]
	r.last[key], r.pending[key] = now, 0
	return total, true
}

package simnvml

import (
	"sort"
	"time"
)

// timeline numbers the occurrences of scenario-timed items (events, log
// lines) across loops: occurrence n is item n mod k of loop n div k, where k
// is the number of items. Elapsed time, not scenario time, orders them, so
// a cursor never runs backwards when the scenario wraps.
type timeline struct {
	ats  []time.Duration // scenario times, ascending
	loop time.Duration   // 0: the scenario plays once
}

// at returns the elapsed time of occurrence n, or false if there is none.
func (tl timeline) at(n int64) (time.Duration, bool) {
	k := int64(len(tl.ats))
	if k == 0 || n < 0 {
		return 0, false
	}
	if tl.loop == 0 {
		if n >= k {
			return 0, false
		}
		return tl.ats[n], true
	}
	return time.Duration(n/k)*tl.loop + tl.ats[n%k], true
}

// item is the index of occurrence n's item.
func (tl timeline) item(n int64) int { return int(n % int64(len(tl.ats))) }

// firstFrom is the number of the first occurrence at or after elapsed el.
func (tl timeline) firstFrom(el time.Duration) int64 {
	el = max(el, 0)
	k := len(tl.ats)
	if tl.loop == 0 {
		return int64(sort.Search(k, func(i int) bool { return tl.ats[i] >= el }))
	}
	rem := el % tl.loop
	return int64(el/tl.loop)*int64(k) + int64(sort.Search(k, func(i int) bool { return tl.ats[i] >= rem }))
}

// catchUp moves cursor next past occurrences more than one loop older than
// el: a consumer that stalled, or a clock that jumped, replays at most one
// loop instead of every loop it missed.
func (tl timeline) catchUp(next int64, el time.Duration) int64 {
	if tl.loop == 0 {
		return next
	}
	if t, ok := tl.at(next); ok && t < el-tl.loop {
		return tl.firstFrom(el - tl.loop)
	}
	return next
}

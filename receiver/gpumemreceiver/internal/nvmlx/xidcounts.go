package nvmlx

import (
	"sort"
	"sync"
)

// XidCounts counts a device's Xid events by code for nvidia.gpu.xid.errors. The Xid source
// adds, the scraper reads: hence the lock.
type XidCounts struct {
	mu     sync.Mutex
	counts map[int]int64
}

// Add counts one event of the code.
func (c *XidCounts) Add(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[int]int64{}
	}
	c.counts[code]++
}

// Each calls fn with each code seen and its count, in code order so output is stable.
func (c *XidCounts) Each(fn func(code int, count int64)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.counts) == 0 {
		return
	}
	codes := make([]int, 0, len(c.counts))
	for code := range c.counts {
		codes = append(codes, code)
	}
	sort.Ints(codes)
	for _, code := range codes {
		fn(code, c.counts[code])
	}
}

package gpumemreceiver

import (
	"sort"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// xidCounter counts a device's Xid events by code for nvidia.gpu.xid.errors. The Xid source
// adds, the scraper reads: hence the lock.
type xidCounter struct {
	mu     sync.Mutex
	counts map[int]int64
}

func (c *xidCounter) add(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[int]int64{}
	}
	c.counts[code]++
}

// record emits one point per code seen, in code order so output is stable.
func (c *xidCounter) record(mb *metadata.MetricsBuilder, ts pcommon.Timestamp) {
	if !mb.Enabled(metadata.NvidiaGpuXidErrors) {
		return
	}
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
		if dp, ok := mb.RecordInt(metadata.NvidiaGpuXidErrors, ts, c.counts[code]); ok {
			dp.Attributes().PutInt(metadata.AttrNvidiaGpuXid, int64(code))
		}
	}
}

package window

import (
	"time"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/gpustate"
)

// Allocation is one nvidia.gpu.allocation point (gpustate, shared with the classifier).
type Allocation = gpustate.Allocation

// AllocationPoint is an Allocation at a point's own time (Unix nanoseconds).
type AllocationPoint struct {
	T int64
	Allocation
}

// alloc is an allocation and the span of its points. An allocation lasts as long as its pod,
// and the receiver reports it on every collection, so a span rather than a series: what a
// query needs is whether it held at a moment.
type alloc struct {
	Allocation
	first, last int64
}

// allocSlack widens an allocation's span on both sides. The receiver refreshes PodResources
// every 10 s by default, so a pod that started, or ended, that long ago may not be in its
// newest points yet; a minute is several refreshes and still far less than a pod's life.
const allocSlack = int64(time.Minute)

// allocBytes is the budget's cost of one allocation besides its strings' bytes: the entry
// in the GPU's array (six string headers and the span).
const allocBytes = 112

// ObserveAllocations records the nvidia.gpu.allocation points of one GPU resource. Points
// stamped too far ahead of the clock are rejected and counted.
func (s *Store) ObserveAllocations(key GPUKey, info GPUInfo, points []AllocationPoint) Overflow {
	var of Overflow
	latest := int64(1<<63 - 1)
	if s.cfg.Now != nil {
		latest = s.cfg.Now().UnixNano() + int64(s.cfg.MaxAhead)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for i := range points {
		if points[i].T > latest {
			of.FutureRejected++
			continue
		}
		points[n] = points[i]
		n++
	}
	if n == 0 {
		return of
	}
	g := s.gpu(key, &of)
	s.touch(g)
	before := g.bytes
	g.setInfo(info)
	for i := range points[:n] {
		g.addAlloc(&points[i], s.cfg, &of)
	}
	s.bytes += g.bytes - before
	for s.cfg.MaxBytes > 0 && s.bytes > s.cfg.MaxBytes && s.lru.next != g {
		s.evict(s.lru.next, key.Host)
		of.GPUsEvicted++
	}
	return of
}

// setInfo keeps what the resource says; empty fields leave the known value alone.
func (g *gpu) setInfo(info GPUInfo) {
	if info.Name != "" {
		g.info.Name = info.Name
	}
	if info.BusID != "" {
		g.info.BusID = info.BusID
	}
	if info.Index >= 0 {
		g.info.Index = info.Index
	}
}

func (g *gpu) addAlloc(p *AllocationPoint, cfg Config, of *Overflow) {
	if p.T < g.newest-int64(cfg.Window) {
		return // older than the window: the next trim would drop it
	}
	for i := range g.allocs {
		if a := &g.allocs[i]; a.Allocation == p.Allocation {
			a.first, a.last = min(a.first, p.T), max(a.last, p.T)
			return
		}
	}
	if cfg.MaxAllocationsPerGPU > 0 && len(g.allocs) >= cfg.MaxAllocationsPerGPU {
		oldest := 0
		for i := range g.allocs {
			if g.allocs[i].last < g.allocs[oldest].last {
				oldest = i
			}
		}
		g.dropAlloc(oldest)
		of.AllocsEvicted++
	}
	g.allocs = append(g.allocs, alloc{Allocation: p.Allocation, first: p.T, last: p.T})
	g.bytes += allocCost(&p.Allocation)
}

// dropAlloc removes allocs[i], keeping the order the rest were first seen in.
func (g *gpu) dropAlloc(i int) {
	g.bytes -= allocCost(&g.allocs[i].Allocation)
	g.allocs = append(g.allocs[:i], g.allocs[i+1:]...)
	g.allocs[len(g.allocs) : len(g.allocs)+1][0] = alloc{} // release the strings of the tail slot
}

// trimAllocs forgets allocations last seen before cutoff.
func (g *gpu) trimAllocs(cutoff int64) {
	for i := len(g.allocs) - 1; i >= 0; i-- {
		if g.allocs[i].last < cutoff {
			g.dropAlloc(i)
		}
	}
}

func allocCost(a *Allocation) int64 {
	return allocBytes + int64(len(a.PodUID)+len(a.PodName)+len(a.Namespace)+len(a.Container)+len(a.DeviceID)+len(a.Resource))
}

// allocatedAt reports whether the allocation held at t, within allocSlack.
func (a *alloc) allocatedAt(t int64) bool {
	return a.first-allocSlack <= t && t <= a.last+allocSlack
}

// appendAllocations appends the GPU's allocations that held at t.
func (g *gpu) appendAllocations(dst []Allocation, t int64) []Allocation {
	for i := range g.allocs {
		if g.allocs[i].allocatedAt(t) {
			dst = append(dst, g.allocs[i].Allocation)
		}
	}
	return dst
}

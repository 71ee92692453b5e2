package classify

import (
	"fmt"
	"math"
)

// Values that cannot be true never decide a cause: a corrupt sample, a sender's unit bug or
// a hostile record would otherwise become the "evidence". sanitize drops them (they become
// unknown, -1) before any rule runs and says what it dropped.

const (
	// maxPlausibleBytes: no GPU holds 64 TiB of device memory (the largest today hold under
	// 300 GB); the metric window rejects the same bound.
	maxPlausibleBytes = int64(1) << 46
	// maxPlausibleRetired: NVML retires at most 64 pages per cause on the GPUs that retire
	// pages at all (NVIDIA's dynamic page retirement notes); 16 times that leaves room for
	// boards we do not know and still stops a counter that is no page count.
	maxPlausibleRetired = 1024
)

// sanitize returns the OOM and a copy of the GPU state without impossible values, and what
// it dropped. The caller's state is not modified; slices are copied only when they change.
func sanitize(oom OOM, in *GPUState) (OOM, *GPUState, []string) {
	var dropped []string
	drop := func(v *int64, format string, args ...any) {
		dropped = append(dropped, fmt.Sprintf(format, args...))
		*v = -1
	}
	var gpu *GPUState
	if in != nil {
		g := *in
		gpu = &g
		if g.Total > maxPlausibleBytes {
			drop(&g.Total, "the GPU's total of %s", humanBytes(g.Total))
		}
	}
	// Capacity to judge the other values by: the GPU's, else the message's.
	total := int64(-1)
	if gpu != nil && gpu.Total > 0 {
		total = gpu.Total
	}
	if oom.TotalBytes > maxPlausibleBytes || (total > 0 && oom.TotalBytes > total+total/64) {
		// A message's total a little above the GPU's is a rounding of "79.15 GiB"; far above
		// is no capacity this GPU has.
		drop(&oom.TotalBytes, "the message's total of %s", humanBytes(oom.TotalBytes))
	}
	if total < 0 && oom.TotalBytes > 0 {
		total = oom.TotalBytes
	}
	limit := maxPlausibleBytes
	if total > 0 {
		limit = total + total/64
	}
	above := func(v *int64, what string) {
		if *v > limit {
			drop(v, "%s of %s above the %s total", what, humanBytes(*v), humanBytes(total))
		}
	}
	above(&oom.FreeBytes, "the message's free")
	above(&oom.ReservedBytes, "the message's reserved")
	above(&oom.AllocatedBytes, "the message's allocated")
	above(&oom.ProcessBytes, "the message's process total")
	if oom.AllocatedBytes >= 0 && oom.ReservedBytes >= 0 && oom.AllocatedBytes > oom.ReservedBytes {
		// Reserved is allocated plus cached: one of the two is wrong and neither can be told.
		dropped = append(dropped, fmt.Sprintf("the message's allocated %s above its reserved %s",
			humanBytes(oom.AllocatedBytes), humanBytes(oom.ReservedBytes)))
		oom.AllocatedBytes, oom.ReservedBytes = -1, -1
	}
	if gpu == nil {
		return oom, nil, dropped
	}
	above(&gpu.Used, "used")
	above(&gpu.Free, "free")
	above(&gpu.Reserved, "driver-reserved")
	above(&gpu.Unattributed, "unattributed")
	gpu.Usage = plausiblePoints(gpu.Usage, limit, &dropped, "memory-usage samples")
	copied := false
	for i := range gpu.Processes {
		p := &gpu.Processes[i]
		bad := p.Bytes > limit
		series := plausiblePoints(p.Series, limit, &dropped, fmt.Sprintf("samples of pid %d", p.PID))
		if !bad && len(series) == len(p.Series) {
			continue
		}
		if !copied {
			gpu.Processes = append([]Process(nil), gpu.Processes...)
			p, copied = &gpu.Processes[i], true
		}
		p.Series = series
		if bad {
			drop(&p.Bytes, "pid %d's %s", p.PID, humanBytes(p.Bytes))
		}
	}
	for cause, n := range gpu.RetiredPages {
		if n > maxPlausibleRetired {
			dropped = append(dropped, fmt.Sprintf("%d retired pages (%s)", n, cause))
			gpu.RetiredPages = nil // unknown: a counter this wrong says nothing of the others
			break
		}
	}
	return oom, gpu, dropped
}

// plausiblePoints returns s without points that are not finite or above limit; s itself when
// all are fine.
func plausiblePoints(s []Point, limit int64, dropped *[]string, what string) []Point {
	bad := 0
	for _, p := range s {
		if !plausible(p.V, limit) {
			bad++
		}
	}
	if bad == 0 {
		return s
	}
	out := make([]Point, 0, len(s)-bad)
	for _, p := range s {
		if plausible(p.V, limit) {
			out = append(out, p)
		}
	}
	*dropped = append(*dropped, fmt.Sprintf("%d %s above the GPU's total", bad, what))
	return out
}

func plausible(v float64, limit int64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 && v <= float64(limit)
}

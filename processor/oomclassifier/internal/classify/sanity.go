package classify

import "fmt"

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
	var bad int
	if gpu.Usage, bad = plausiblePoints(gpu.Usage, limit); bad > 0 {
		dropped = append(dropped, fmt.Sprintf("%d memory-usage samples above the GPU's total", bad))
	}
	// Process bytes here; a process's series only where a rule reads it (sanitizeFailing).
	copied := false
	for i := range gpu.Processes {
		if gpu.Processes[i].Bytes <= limit {
			continue
		}
		if !copied {
			gpu.Processes, copied = append([]Process(nil), gpu.Processes...), true
		}
		p := &gpu.Processes[i]
		drop(&p.Bytes, "pid %d's %s", p.PID, humanBytes(p.Bytes))
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

// sanitizeFailing drops the impossible points of the failing process's series, the only
// process series a rule reads (the leak fit), copying the process list before changing it.
func sanitizeFailing(f *facts) {
	if f.failing == nil || len(f.failing.Series) == 0 || f.gpu.Total <= 0 {
		return
	}
	series, bad := plausiblePoints(f.failing.Series, f.gpu.Total+f.gpu.Total/64)
	if bad == 0 {
		return
	}
	i := -1
	for j := range f.gpu.Processes { // by address: two entries may hold equal values
		if &f.gpu.Processes[j] == f.failing {
			i = j
		}
	}
	if i < 0 {
		return
	}
	f.gpu.Processes = append([]Process(nil), f.gpu.Processes...)
	f.failing = &f.gpu.Processes[i]
	f.failing.Series = series
	f.dropped = append(f.dropped, fmt.Sprintf("%d samples of pid %d above the GPU's total", bad, f.failing.PID))
}

// plausiblePoints returns s without points that are not finite or above limit (s itself when
// all are fine, the common case, without copying) and how many it left out.
func plausiblePoints(s []Point, limit int64) ([]Point, int) {
	bad := 0
	for _, p := range s {
		if !plausible(p.V, limit) {
			bad++
		}
	}
	if bad == 0 {
		return s, 0
	}
	out := make([]Point, 0, len(s)-bad)
	for _, p := range s {
		if plausible(p.V, limit) {
			out = append(out, p)
		}
	}
	return out, bad
}

// plausible: finite, not negative, at most limit. NaN fails both comparisons and ±Inf one.
func plausible(v float64, limit int64) bool {
	return v >= 0 && v <= float64(limit)
}

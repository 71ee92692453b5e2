package classify

import (
	"fmt"
	"math"
)

// ruleZombieContext holds when memory no live process accounts for is beyond the driver's
// normal overhead: max(ZombieMinBytes, ZombieMinFraction × total). Such memory belongs to
// a context whose owner is gone or invisible (a defunct process, a container torn down
// without releasing the GPU).
//
// An empty process list abstains: then "unattributed" also holds the failing process's
// own memory (NVML often lists no processes inside a container), which is no zombie. So does
// a GPU whose driver hid other PID namespaces' processes from the collector: their memory is
// then unattributed too.
func ruleZombieContext(f *facts) verdict {
	g := f.gpu
	if g == nil || len(g.Processes) == 0 || g.ProcessesHidden || f.total <= 0 {
		return verdict{}
	}
	unattributed := g.Unattributed
	complete := true
	if unattributed < 0 {
		// Derive it as the receiver would: used − reserved − Σ process bytes.
		if g.Used < 0 {
			return verdict{}
		}
		reserved := g.Reserved
		if reserved < 0 {
			reserved, complete = 0, false // without memory info v2 the driver's share is inside it
		}
		unattributed = g.Used - reserved - sumProcessBytes(g.Processes)
	}
	limit := math.Max(float64(f.th.ZombieMinBytes), f.th.ZombieMinFraction*float64(f.total))
	if float64(unattributed) <= limit {
		return verdict{}
	}
	ev := fmt.Sprintf("%s had %s in use (%s of %s) that no live process accounts for, above the %s the driver normally keeps",
		gpuName(g), humanBytes(unattributed), percent(unattributed, f.total), humanBytes(f.total), humanBytesF(limit))
	return verdict{holds: true, evidence: ev + shortfallClause(f), complete: complete, explains: unattributed}
}

// sumProcessBytes adds the processes' bytes, ignoring unknown (negative) ones.
func sumProcessBytes(ps []Process) int64 {
	var s int64
	for i := range ps {
		if ps[i].Bytes > 0 {
			s += ps[i].Bytes
		}
	}
	return s
}

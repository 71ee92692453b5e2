package classify

import (
	"fmt"
	"math"
	"slices"
)

// ruleWorkerContextOverhead holds when the failing workload runs, beside its main process,
// many helper processes of similar size that are small next to it and together hold a
// large share of the GPU: DataLoader workers or ranks that initialised CUDA on a GPU they
// do not compute on. It is judged by that shape, not by a fixed context size: a bare
// context costs a few hundred MiB, but cuDNN/cuBLAS handles, eager module loading
// (CUDA_MODULE_LOADING=EAGER) and a few cached tensors take it well past 1 GiB.
//
// Workers are the workload's processes other than its largest (the main process), each at
// most WorkerMaxBytes and WorkerMaxMainFraction × the main process; the rule counts the
// largest group of them within a factor WorkerSizeSpread of each other, and needs
// WorkerMinCount of them holding WorkerMinFraction × total together.
func ruleWorkerContextOverhead(f *facts) verdict {
	g := f.gpu
	if g == nil || f.total <= 0 {
		return verdict{}
	}
	anchor, complete := f.failing, f.failingBy == "pid"
	var best workerGroup
	if anchor != nil {
		best = workerShape(g.Processes, anchor, f.th)
	} else {
		// Unknown failing process: the workload whose workers hold the most.
		for i := range g.Processes {
			if w := workerShape(g.Processes, &g.Processes[i], f.th); w.sum > best.sum {
				best, anchor = w, &g.Processes[i]
			}
		}
	}
	if anchor == nil || best.count == 0 || best.count < f.th.WorkerMinCount ||
		float64(best.sum) < f.th.WorkerMinFraction*float64(f.total) {
		return verdict{}
	}
	per := int64(math.Round(float64(best.sum) / float64(best.count)))
	ev := fmt.Sprintf("%s had %d helper processes of the failing workload (%s) of similar size, each about %s beside its main process's %s, %s in all (%s of %s)",
		gpuName(g), best.count, describeWorkload(anchor), humanBytes(per), humanBytes(best.main), humanBytes(best.sum),
		percent(best.sum, f.total), humanBytes(f.total))
	return verdict{holds: true, evidence: ev + shortfallClause(f), complete: complete, explains: best.sum}
}

// workerGroup is the largest group of similar-sized helper processes of one workload.
type workerGroup struct {
	count int
	sum   int64
	main  int64 // the workload's largest process
}

// maxStackWorkers sizes workerShape's array on the stack; more spill to the heap.
const maxStackWorkers = 64

// workerShape finds anchor's workload's main process and its largest group of helpers.
func workerShape(ps []Process, anchor *Process, th *Thresholds) workerGroup {
	var w workerGroup
	mainIdx := -1
	for i := range ps {
		if ps[i].Bytes > 0 && sameWorkload(&ps[i], anchor) && ps[i].Bytes > w.main {
			w.main, mainIdx = ps[i].Bytes, i
		}
	}
	if mainIdx < 0 {
		return workerGroup{}
	}
	limit := math.Min(float64(th.WorkerMaxBytes), th.WorkerMaxMainFraction*float64(w.main))
	var buf [maxStackWorkers]int64
	sizes := buf[:0]
	for i := range ps {
		p := &ps[i]
		if i == mainIdx || p.Bytes <= 0 || float64(p.Bytes) > limit || !sameWorkload(p, anchor) {
			continue
		}
		sizes = append(sizes, p.Bytes)
	}
	slices.Sort(sizes)
	// Sliding window over the sorted sizes: the most processes with max ≤ spread × min.
	spread := math.Max(th.WorkerSizeSpread, 1)
	lo := 0
	var sum int64
	for hi, b := range sizes {
		sum += b
		for float64(b) > spread*float64(sizes[lo]) {
			sum -= sizes[lo]
			lo++
		}
		if n := hi - lo + 1; n > w.count || (n == w.count && sum > w.sum) {
			w.count, w.sum = n, sum
		}
	}
	return w
}

package classify

import "strings"

// hasContainer reports whether the cgroup told us where the process runs.
func hasContainer(p *Process) bool { return p.ContainerID != "" || p.PodUID != "" }

// sameWorkload reports whether two processes belong to the same tenant: the same pod,
// else the same container; a containerised and a bare process never do; two bare
// processes do when they run the same executable (torchrun ranks, DataLoader workers),
// the best proxy for one job we have without the process tree. A bare PyTorch DataLoader
// worker belongs with a bare Python main process: PyTorch renames each worker's main thread
// to pt_data_worker (torch/utils/data/_utils/worker.py, `_set_thread_name("pt_data_worker")`,
// https://github.com/pytorch/pytorch/blob/main/torch/utils/data/_utils/worker.py), which is
// the comm NVML's process list shows, while the main process keeps python3 (or
// pt_main_thread, the name PyTorch gives its own main thread).
func sameWorkload(a, b *Process) bool {
	switch {
	case a.PodUID != "" && b.PodUID != "":
		return a.PodUID == b.PodUID
	case a.ContainerID != "" && b.ContainerID != "":
		return a.ContainerID == b.ContainerID
	case hasContainer(a) != hasContainer(b):
		return false
	case a.Name == b.Name:
		return true
	default:
		return (a.Name == dataLoaderWorker && pythonMain(b.Name)) || (b.Name == dataLoaderWorker && pythonMain(a.Name))
	}
}

// dataLoaderWorker is the comm of a PyTorch DataLoader worker process.
const dataLoaderWorker = "pt_data_worker"

// pythonMain reports whether a comm is a Python interpreter or PyTorch's main thread.
func pythonMain(name string) bool {
	return strings.HasPrefix(name, "python") || name == "pt_main_thread"
}

// workloadNoun names what "the failing workload" is for a sentence.
func workloadNoun(p *Process) string {
	switch {
	case p == nil:
		return "workload"
	case p.PodUID != "":
		return "pod"
	case p.ContainerID != "":
		return "container"
	default:
		return "process"
	}
}

// largestWorkload returns the process whose workload holds the most memory. When the
// failing process is unknown, assuming it belongs to the largest workload is the
// conservative choice: the memory outside it is the least the other tenants could hold,
// whichever workload actually failed.
func largestWorkload(ps []Process) *Process {
	var best *Process
	var bestSum int64
	for i := range ps {
		var sum int64
		for j := range ps {
			if ps[j].Bytes > 0 && sameWorkload(&ps[i], &ps[j]) {
				sum += ps[j].Bytes
			}
		}
		if best == nil || sum > bestSum {
			best, bestSum = &ps[i], sum
		}
	}
	return best
}

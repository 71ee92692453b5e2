package classify

import (
	"strings"
	"testing"
)

// TestWorkerOverheadBounds pins ruleWorkerContextOverhead at its bounds: worker_min_count
// helpers, worker_max_bytes per helper, sizes within worker_size_spread of each other and
// worker_min_fraction × total together, each bound included.
func TestWorkerOverheadBounds(t *testing.T) {
	const sixteenth = h100Total / 16 // exact: 81559 MiB is a multiple of 16 bytes
	tests := []struct {
		name     string
		ps       []Process
		th       func(*Thresholds)
		evidence string // "" = must not hold; else a substring
	}{
		{name: "exactly worker_min_count helpers", ps: workers(40*gib, 4, 2*gib), evidence: "had 4 helper processes"},
		{name: "one fewer", ps: workers(40*gib, 3, 3*gib)},
		{name: "helpers of exactly worker_max_bytes", ps: workers(40*gib, 4, 4*gib), evidence: "each about 4.0 GiB"},
		{name: "helpers one byte above it", ps: workers(40*gib, 4, 4*gib+1)},
		{name: "sizes exactly worker_size_spread apart", ps: workers(40*gib, 4, 2*gib, 2*gib, 2*gib, 3*gib), evidence: "had 4 helper processes"},
		{name: "sizes one byte further apart", ps: workers(40*gib, 4, 2*gib, 2*gib, 2*gib, 3*gib+1)},
		{name: "together exactly worker_min_fraction", ps: workers(40*gib, 4, sixteenth),
			th: func(th *Thresholds) { th.WorkerMinFraction, th.WorkerMaxBytes = 0.25, 8*gib }, evidence: "(25.0% of 79.6 GiB)"},
		{name: "together one byte below", ps: workers(40*gib, 4, sixteenth, sixteenth, sixteenth, sixteenth-1),
			th: func(th *Thresholds) { th.WorkerMinFraction, th.WorkerMaxBytes = 0.25, 8*gib }},
		{name: "listed processes holding nothing are no helpers", ps: append(workers(40*gib, 4, 2*gib),
			proc(300, "pt_data_worker", "aaaa", 0), proc(301, "pt_data_worker", "aaaa", 0), proc(302, "pt_data_worker", "aaaa", 0),
			proc(303, "pt_data_worker", "aaaa", 0), proc(304, "pt_data_worker", "aaaa", 0)),
			evidence: "had 4 helper processes"},
		{name: "of two groups as many, the one holding more",
			ps: workers(40*gib, 8, gib, gib, gib, gib, 3*gib, 3*gib, 3*gib, 3*gib), evidence: "had 4 helper processes of the failing workload (container aaaa) of similar size, each about 3.0 GiB"},
		{name: "more helpers beat fewer holding more",
			ps: workers(40*gib, 7, gib, gib, gib, gib, gib, 3*gib, 3*gib),
			th: func(th *Thresholds) { th.WorkerMinFraction = 0.05 }, evidence: "had 5 helper processes of the failing workload (container aaaa) of similar size, each about 1.0 GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			if tt.th != nil {
				tt.th(&th)
			}
			v := ruleWorkerContextOverhead(newFacts(pytorchOOM(4*gib, 600*mib, 38*gib, 39*gib), gpuWith(0, tt.ps...), &th))
			if v.holds != (tt.evidence != "") || !strings.Contains(v.evidence, tt.evidence) {
				t.Fatalf("holds=%v: %s\nwant %q", v.holds, v.evidence, tt.evidence)
			}
			if v.holds && !v.complete {
				t.Error("the failing process was matched by pid: complete")
			}
		})
	}
}

// TestWorkerOverheadUnknownFailing: without the failing process, the workload whose helpers
// hold the most is taken (the first listed on a tie), and the evidence is not complete.
func TestWorkerOverheadUnknownFailing(t *testing.T) {
	group := func(container string, pid int, main, helper int64) []Process {
		ps := []Process{proc(pid, "python", container, main)}
		for i := range 4 {
			ps = append(ps, proc(pid+1+i, "pt_data_worker", container, helper))
		}
		return ps
	}
	for _, tt := range []struct {
		name string
		ps   []Process
		want string
	}{
		{"the larger helpers", append(group("aaaa", 100, 30*gib, 2*gib), group("bbbb", 200, 20*gib, 2*gib+512*mib)...),
			"(container bbbb) of similar size, each about 2.5 GiB beside its main process's 20.0 GiB, 10.0 GiB in all (12.6% of 79.6 GiB)"},
		{"a tie", append(group("aaaa", 100, 30*gib, 2*gib), group("bbbb", 200, 20*gib, 2*gib)...),
			"(container aaaa) of similar size, each about 2.0 GiB beside its main process's 30.0 GiB, 8.0 GiB in all"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := pytorchOOM(4*gib, 600*mib, 18*gib, 19*gib)
			o.PID = -1
			th := DefaultThresholds()
			v := ruleWorkerContextOverhead(newFacts(o, gpuWith(0, tt.ps...), &th))
			if !v.holds || v.complete || !strings.Contains(v.evidence, tt.want) {
				t.Fatalf("holds=%v complete=%v: %s\nwant %q", v.holds, v.complete, v.evidence, tt.want)
			}
		})
	}
}

// TestZombieBounds: unattributed memory is a zombie above max(zombie_min_bytes,
// zombie_min_fraction × total), not at it; derived as used − driver-reserved − Σ process
// bytes (unknown process bytes left out) when the receiver did not report it, and then
// complete only when the driver's share was known.
func TestZombieBounds(t *testing.T) {
	const quarter = h100Total / 4
	tests := []struct {
		name            string
		gpu             func() *GPUState
		holds, complete bool
		explains        int64
	}{
		{name: "exactly the fraction", gpu: func() *GPUState { return gpuWith(quarter, proc(100, "python", "aaaa", 20*gib)) }},
		{name: "one byte above", gpu: func() *GPUState { return gpuWith(quarter+1, proc(100, "python", "aaaa", 20*gib)) },
			holds: true, complete: true, explains: quarter + 1},
		{name: "a reported zero is believed", gpu: func() *GPUState {
			g := gpuWith(0, proc(100, "python", "aaaa", 20*gib))
			g.Used += 30 * gib // memory of a process the list missed: the receiver's 0 already accounts for it
			return g
		}},
		{name: "derived, driver share known as zero", gpu: func() *GPUState {
			g := gpuWith(quarter+1, proc(100, "python", "aaaa", 20*gib))
			g.Used -= g.Reserved
			g.Reserved, g.Unattributed = 0, -1
			return g
		}, holds: true, complete: true, explains: quarter + 1},
		{name: "derived, driver share unknown", gpu: func() *GPUState {
			g := gpuWith(quarter+1, proc(100, "python", "aaaa", 20*gib))
			g.Reserved, g.Unattributed = -1, -1
			return g
		}, holds: true, complete: false, explains: quarter + 1 + 512*mib},
		{name: "derived, a process of unknown size left out", gpu: func() *GPUState {
			g := gpuWith(quarter+1, proc(100, "python", "aaaa", 20*gib), proc(300, "other", "bbbb", 0))
			g.Processes[1].Bytes = -1
			g.Unattributed = -1
			return g
		}, holds: true, complete: true, explains: quarter + 1},
		// Processes of other PID namespaces are left out of the list: their memory is
		// unattributed, whether reported or derived, and no zombie.
		{name: "processes hidden, reported", gpu: func() *GPUState {
			g := gpuWith(quarter+1, proc(100, "python", "aaaa", 20*gib))
			g.ProcessesHidden = true
			return g
		}},
		{name: "processes hidden, derived", gpu: func() *GPUState {
			g := gpuWith(quarter+1, proc(100, "python", "aaaa", 20*gib))
			g.ProcessesHidden, g.Unattributed = true, -1
			return g
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			th.ZombieMinFraction = 0.25
			v := ruleZombieContext(newFacts(pytorchOOM(2*gib, 900*mib, 19*gib, 19*gib+500*mib), tt.gpu(), &th))
			if v.holds != tt.holds || v.complete != tt.complete || v.explains != tt.explains {
				t.Fatalf("holds=%v complete=%v explains=%d, want %v %v %d: %s",
					v.holds, v.complete, v.explains, tt.holds, tt.complete, tt.explains, v.evidence)
			}
		})
	}
}

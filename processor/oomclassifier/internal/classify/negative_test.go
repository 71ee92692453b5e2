package classify

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRulesDoNotFire gives each rule a look-alike it must not mistake for its cause.
func TestRulesDoNotFire(t *testing.T) {
	loadThenFlat := func(loadSeconds float64) *GPUState {
		p := proc(100, "python", "aaaa", 0)
		p.Series = series(func(s float64) float64 {
			switch {
			case s < 60:
				return 0
			case s < 60+loadSeconds:
				return float64(40*gib) * (s - 60) / loadSeconds
			default:
				return float64(40 * gib)
			}
		})
		p.Bytes = 40 * gib
		g := gpuWith(0, p)
		setUsageFromProcesses(g)
		return g
	}
	tests := []struct {
		name  string
		rule  func(*facts) verdict
		oom   OOM
		gpu   *GPUState
		th    func(*Thresholds)
		extra func(*GPUState)
	}{
		{name: "leak: a model load step then flat usage", rule: ruleMemoryLeak,
			oom: pytorchOOM(50*gib, 39*gib, 40*gib, 40*gib), gpu: loadThenFlat(1)},
		{name: "leak: a 60 s load ramp then flat usage", rule: ruleMemoryLeak,
			oom: pytorchOOM(50*gib, 39*gib, 40*gib, 40*gib), gpu: loadThenFlat(60)},
		{name: "leak: a ramp over the first half then a plateau", rule: ruleMemoryLeak,
			oom: pytorchOOM(2*gib, gib, 40*gib, 40*gib),
			gpu: func() *GPUState {
				p := proc(100, "python", "aaaa", 0)
				p.Series = series(func(s float64) float64 { return float64(20*gib) + min(s, 450)*float64(45*mib) })
				p.Bytes = int64(p.Series[len(p.Series)-1].V)
				g := gpuWith(0, p)
				setUsageFromProcesses(g)
				return g
			}()},
		{name: "leak: a slow drift of 100 KiB/s", rule: ruleMemoryLeak,
			oom: pytorchOOM(2*gib, gib, 40*gib, 40*gib),
			gpu: func() *GPUState {
				p := proc(100, "python", "aaaa", 0)
				p.Series = series(func(s float64) float64 { return float64(70*gib) + s*float64(100*kib) })
				g := gpuWith(0, p)
				setUsageFromProcesses(g)
				return g
			}()},
		{name: "tenant: a second big process in the same container", rule: ruleOtherTenant,
			oom: pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib),
			gpu: gpuWith(0, proc(100, "python", "aaaa", 60*gib), proc(101, "python", "aaaa", 18*gib))},
		{name: "tenant: a second big process in the same pod, other container", rule: ruleOtherTenant,
			oom: pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib),
			gpu: func() *GPUState {
				a, b := proc(100, "python", "aaaa", 60*gib), proc(101, "python", "bbbb", 18*gib)
				a.PodUID, b.PodUID = "pod-1", "pod-1"
				return gpuWith(0, a, b)
			}()},
		{name: "tenant: the only process, its pid from another namespace", rule: ruleOtherTenant,
			oom: func() OOM { o := pytorchOOM(2*gib, 900*mib, 77*gib, 78*gib); o.PID = 7; return o }(),
			gpu: gpuWith(0, proc(98765, "python", "aaaa", 78*gib))},
		{name: "tenant: a desktop's 200 MiB Xorg", rule: ruleOtherTenant,
			oom: pytorchOOM(2*gib, 900*mib, 77*gib, 78*gib),
			gpu: gpuWith(0, proc(100, "python", "", 78*gib), proc(900, "Xorg", "", 200*mib))},
		{name: "workers: three small contexts", rule: ruleWorkerContextOverhead,
			oom: pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib),
			gpu: gpuWith(0, proc(100, "python", "aaaa", 60*gib), proc(101, "w", "aaaa", 3*gib),
				proc(102, "w", "aaaa", 500*mib), proc(103, "w", "aaaa", 500*mib), proc(104, "w", "aaaa", 500*mib))},
		{name: "workers: many small contexts of another tenant", rule: ruleWorkerContextOverhead,
			oom: pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib),
			gpu: func() *GPUState {
				ps := []Process{proc(100, "python", "aaaa", 60*gib)}
				for i := range 20 {
					ps = append(ps, proc(200+i, "w", "bbbb", 500*mib))
				}
				return gpuWith(0, ps...)
			}()},
		{name: "fragmentation: 300 MiB reserved but unallocated", rule: ruleFragmentation,
			oom: pytorchOOM(2*gib, 900*mib, 77*gib, 77*gib+300*mib), gpu: gpuWith(0, proc(100, "python", "", 78*gib))},
		{name: "fragmentation: gap smaller than the request", rule: ruleFragmentation,
			oom: pytorchOOM(30*gib, 900*mib, 40*gib, 60*gib), gpu: gpuWith(0, proc(100, "python", "", 61*gib))},
		{name: "fragmentation: no allocator numbers", rule: ruleFragmentation,
			oom: pytorchOOM(2*gib, 900*mib, -1, -1), gpu: gpuWith(0, proc(100, "python", "", 78*gib))},
		{name: "zombie: 700 MiB unattributed is driver overhead", rule: ruleZombieContext,
			oom: pytorchOOM(2*gib, 900*mib, 77*gib, 77*gib), gpu: gpuWith(700*mib, proc(100, "python", "", 77*gib))},
		{name: "zombie: no process list (a container without the host pid view)", rule: ruleZombieContext,
			oom: pytorchOOM(2*gib, 900*mib, 77*gib, 77*gib),
			gpu: func() *GPUState { g := gpuWith(77 * gib); g.Processes = nil; return g }()},
		{name: "fault: an informational Xid", rule: ruleGPUFault,
			oom: pytorchOOM(2*gib, 900*mib, 77*gib, 77*gib),
			gpu: func() *GPUState {
				g := gpuWith(0, proc(100, "python", "", 78*gib))
				g.Xids = []XidEvent{{T: oomTime.Add(-time.Second), Code: 31, Fault: false}}
				return g
			}()},
		{name: "fault: a fault Xid ten minutes before", rule: ruleGPUFault,
			oom: pytorchOOM(2*gib, 900*mib, 77*gib, 77*gib),
			gpu: func() *GPUState {
				g := gpuWith(0, proc(100, "python", "", 78*gib))
				g.Xids = []XidEvent{{T: oomTime.Add(-10 * time.Minute), Code: 79, Fault: true}}
				return g
			}()},
		{name: "capacity: total at the product's usual value", rule: ruleCapacityLoss,
			oom: pytorchOOM(2*gib, 900*mib, 77*gib, 77*gib), gpu: gpuWith(0, proc(100, "python", "", 78*gib))},
		{name: "capacity: a MIG instance is not compared with the full card", rule: ruleCapacityLoss,
			oom: pytorchOOM(2*gib, 900*mib, 9*gib, 9*gib),
			gpu: func() *GPUState {
				g := gpuWith(0, proc(100, "python", "", 9*gib))
				g.Name, g.Total = "NVIDIA H100 80GB HBM3 MIG 1g.10gb", 9984*mib
				return g
			}()},
		{name: "capacity: 64 retired pages cannot explain a 1 GiB shortfall", rule: ruleCapacityLoss,
			oom: pytorchOOM(2*gib, gib, 77*gib, 77*gib),
			gpu: func() *GPUState {
				g := gpuWith(0, proc(100, "python", "", 78*gib))
				g.RetiredPages = map[string]int64{"double_bit_ecc": 64}
				return g
			}()},
		{name: "too large: the request fit in what was free", rule: ruleWorkloadTooLarge,
			oom: pytorchOOM(2*gib, 3*gib, 75*gib, 75*gib), gpu: gpuWith(0, proc(100, "python", "", 76*gib))},
		{name: "too large: a small workload", rule: ruleWorkloadTooLarge,
			oom: pytorchOOM(2*gib, 900*mib, 20*gib, 20*gib), gpu: gpuWith(0, proc(100, "python", "", 21*gib))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			f := newFacts(tt.oom, tt.gpu, &th)
			if v := tt.rule(f); v.holds {
				t.Fatalf("rule fired: %s", v.evidence)
			}
		})
	}
}

// TestContributingOrder: several causes hold; the one explaining the most memory wins and
// the rest follow in table order; a fault near the OOM wins whatever the others explain.
func TestContributingOrder(t *testing.T) {
	// A zombie context (10 GiB), another tenant (12 GiB) and a fragmented allocator
	// (20 GiB of 55 GiB reserved unallocated) on one GPU, with a fault Xid long before.
	g := gpuWith(10*gib, proc(100, "python", "aaaa", 56*gib), proc(300, "other", "cccc", 12*gib))
	g.Xids = []XidEvent{{T: oomTime.Add(-time.Hour), Code: 79, Fault: true}}
	r := Classify(pytorchOOM(4*gib, 600*mib, 35*gib, 55*gib), g, DefaultThresholds())
	want := []string{CauseZombieContext, CauseOtherTenant}
	if r.Cause != CauseFragmentation || !slices.Equal(r.Contributing, want) {
		t.Fatalf("got %q %v, want %q %v", r.Cause, r.Contributing, CauseFragmentation, want)
	}
	// A tenant twice the zombie's size and fragmentation below both: the tenant explains most.
	g2 := gpuWith(10*gib, proc(100, "python", "aaaa", 46*gib), proc(300, "other", "cccc", 20*gib))
	r = Classify(pytorchOOM(4*gib, 600*mib, 35*gib, 45*gib), g2, DefaultThresholds())
	want = []string{CauseZombieContext, CauseFragmentation}
	if r.Cause != CauseOtherTenant || !slices.Equal(r.Contributing, want) {
		t.Fatalf("got %q %v, want %q %v: %s", r.Cause, r.Contributing, CauseOtherTenant, want, r.Evidence)
	}
	// Move the Xid next to the OOM: the fault now decides and the rest contribute.
	g.Xids[0].T = oomTime.Add(-3 * time.Second)
	r = Classify(pytorchOOM(4*gib, 600*mib, 35*gib, 55*gib), g, DefaultThresholds())
	want = []string{CauseZombieContext, CauseOtherTenant, CauseFragmentation}
	if r.Cause != CauseGPUFault || !slices.Equal(r.Contributing, want) {
		t.Fatalf("got %q %v, want %q %v", r.Cause, r.Contributing, CauseGPUFault, want)
	}
}

// TestConfidence grades the same evidence by how the GPU was matched and how fresh it was.
func TestConfidence(t *testing.T) {
	oom := pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib)
	build := func() *GPUState {
		return gpuWith(0, proc(100, "python", "aaaa", 60*gib), proc(4242, "python", "bbbb", 18*gib))
	}
	tests := []struct {
		name   string
		modify func(*GPUState, *OOM)
		want   string
	}{
		{"pid-matched and fresh", func(*GPUState, *OOM) {}, ConfidenceHigh},
		{"only GPU on the host", func(g *GPUState, _ *OOM) { g.MatchedBy = MatchedByOnlyGPU }, ConfidenceHigh},
		{"matched by device index", func(g *GPUState, _ *OOM) { g.MatchedBy = MatchedByNodeOrdinal }, ConfidenceMedium},
		{"a stale sample", func(g *GPUState, _ *OOM) { g.SampleAge = time.Minute }, ConfidenceMedium},
		{"failing process not identified", func(_ *GPUState, o *OOM) { o.PID = -1 }, ConfidenceMedium},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, o := build(), oom
			tt.modify(g, &o)
			r := Classify(o, g, DefaultThresholds())
			if r.Cause != CauseOtherTenant || r.Confidence != tt.want {
				t.Fatalf("got %s/%s, want %s/%s: %s", r.Cause, r.Confidence, CauseOtherTenant, tt.want, r.Evidence)
			}
		})
	}
}

// TestNilGPU: without GPU state only message-decidable causes can hold, at low confidence
// (no rule that needs metrics could be checked), and the evidence says no GPU was matched.
func TestNilGPU(t *testing.T) {
	o := pytorchOOM(4*gib, gib, 40*gib, 70*gib)
	o.NoGPU = NoGPU{Reason: NoGPUNotMatched, Host: "n"}
	r := Classify(o, nil, DefaultThresholds())
	if r.Cause != CauseFragmentation || r.Confidence != ConfidenceLow ||
		!strings.Contains(r.Evidence, `; no GPU was matched (no GPU of host "n" matched the OOM: `) {
		t.Fatalf("got %s/%s: %s", r.Cause, r.Confidence, r.Evidence)
	}
	r = Classify(pytorchOOM(4*gib, gib, 76*gib, 76*gib), nil, DefaultThresholds())
	if r.Cause != CauseWorkloadTooLarge || r.Confidence != ConfidenceLow ||
		!strings.Contains(r.Evidence, "no GPU was matched (no GPU metrics matched the OOM), so only the message's own numbers were checked.") {
		t.Fatalf("got %s/%s: %s", r.Cause, r.Confidence, r.Evidence)
	}
	r = Classify(pytorchOOM(4*gib, gib, -1, -1), nil, DefaultThresholds())
	if r.Cause != CauseUnknown || r.Confidence != ConfidenceLow {
		t.Fatalf("got %s/%s: %s", r.Cause, r.Confidence, r.Evidence)
	}
}

// TestEverythingUnknown: every number -1, no maps, no series: unknown, and no panic.
func TestEverythingUnknown(t *testing.T) {
	g := &GPUState{Total: -1, Used: -1, Free: -1, Reserved: -1, Unattributed: -1, SampleAge: -1,
		Processes: []Process{{PID: -1, Bytes: -1}, {PID: -1, Bytes: -1}}}
	r := Classify(blankOOM(), g, DefaultThresholds())
	if r.Cause != CauseUnknown || r.Confidence != ConfidenceLow || r.Evidence == "" || r.Recommendation == "" {
		t.Fatalf("got %+v", r)
	}
	r = Classify(OOM{}, &GPUState{}, Thresholds{})
	if r.Cause == "" || r.Evidence == "" {
		t.Fatalf("zero values: got %+v", r)
	}
}

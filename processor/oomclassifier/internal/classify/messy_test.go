package classify

import (
	"slices"
	"strings"
	"testing"
)

// Cases from fleets that are not our own scenarios: worker contexts of every size, MIG
// instances, shared GPUs, several causes at once, values that cannot be true.

// workers builds a main process of mainBytes and n helpers of the given sizes (cycled) in
// one container.
func workers(mainBytes int64, n int, sizes ...int64) []Process {
	ps := []Process{proc(100, "python", "aaaa", mainBytes)}
	for i := range n {
		ps = append(ps, proc(200+i, "pt_data_worker", "aaaa", sizes[i%len(sizes)]))
	}
	return ps
}

func TestWorkerOverheadByShape(t *testing.T) {
	tests := []struct {
		name string
		ps   []Process
		oom  OOM
		want bool
	}{
		{"8 workers of 1.1 GiB (cuDNN handles): above the old 1 GiB cap", workers(62*gib, 8, gib+100*mib, gib+110*mib),
			pytorchOOM(4*gib, 600*mib, 60*gib, 61*gib), true},
		{"6 workers of 1.9 GiB (eager module loading)", workers(60*gib, 6, 1900*mib, 1950*mib),
			pytorchOOM(4*gib, 600*mib, 58*gib, 59*gib), true},
		{"16 bare workers beside a bare python main", func() []Process {
			ps := workers(60*gib, 16, 560*mib)
			for i := range ps {
				ps[i].ContainerID = ""
			}
			return ps
		}(), pytorchOOM(4*gib, 600*mib, 58*gib, 59*gib), true},
		{"helpers not small beside the main process (ranks sharing a GPU)", workers(12*gib, 5, 11*gib),
			pytorchOOM(4*gib, 600*mib, 11*gib, 11*gib+200*mib), false},
		{"helpers of mixed sizes: no group of 4 alike", workers(50*gib, 6, 300*mib, 900*mib, 2500*mib),
			pytorchOOM(4*gib, 600*mib, 48*gib, 49*gib), false},
		{"helpers too few to matter", workers(70*gib, 5, 600*mib),
			pytorchOOM(4*gib, 600*mib, 68*gib, 69*gib), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th := DefaultThresholds()
			f := newFacts(tt.oom, gpuWith(0, tt.ps...), &th)
			v := ruleWorkerContextOverhead(f)
			if v.holds != tt.want {
				t.Fatalf("holds=%v, want %v: %s", v.holds, tt.want, v.evidence)
			}
			if tt.want {
				if r := Classify(tt.oom, gpuWith(0, tt.ps...), th); r.Cause != CauseWorkerContextOverhead {
					t.Fatalf("cause %s %v: %s", r.Cause, r.Contributing, r.Evidence)
				}
			}
		})
	}
}

// TestMIGInstanceCapacity: an OOM inside a 3g.40gb instance is judged against the
// instance's 39.5 GiB, not the card's 80 GiB: the workload fills the instance.
func TestMIGInstanceCapacity(t *testing.T) {
	g := gpuWith(0, proc(100, "python", "aaaa", 38*gib))
	g.Name, g.HWID = "NVIDIA A100-SXM4-80GB MIG 3g.40gb", "MIG-7f3c"
	g.Total = 40448 * mib
	g.Used = g.Reserved + 38*gib
	g.Free = g.Total - g.Used
	oom := pytorchOOM(2*gib, 900*mib, 37*gib, 37*gib+400*mib)
	oom.TotalBytes = 39*gib + 256*mib
	r := Classify(oom, g, DefaultThresholds())
	if r.Cause != CauseWorkloadTooLarge || !strings.Contains(r.Evidence, "39.5 GiB GPU") {
		t.Fatalf("got %s: %s", r.Cause, r.Evidence)
	}
}

// TestMixedCauses: the cause that explains most of the memory wins, the others contribute.
func TestMixedCauses(t *testing.T) {
	t.Run("a leak on a GPU that also has a tenant", func(t *testing.T) {
		p := proc(100, "python", "aaaa", 0)
		p.Series = series(func(s float64) float64 { return float64(20*gib) + s*float64(50*mib) })
		p.Bytes = int64(p.Series[len(p.Series)-1].V)
		g := gpuWith(0, p, proc(300, "vllm", "bbbb", 12*gib))
		setUsageFromProcesses(g)
		r := Classify(pytorchOOM(2*gib, 400*mib, p.Bytes-gib, p.Bytes-700*mib), g, DefaultThresholds())
		if r.Cause != CauseMemoryLeak || !slices.Equal(r.Contributing, []string{CauseOtherTenant}) {
			t.Fatalf("got %s %v: %s", r.Cause, r.Contributing, r.Evidence)
		}
	})
	t.Run("fragmentation during a leak", func(t *testing.T) {
		p := proc(100, "python", "aaaa", 0)
		p.Series = series(func(s float64) float64 { return float64(25*gib) + s*float64(55*mib) })
		p.Bytes = int64(p.Series[len(p.Series)-1].V)
		g := gpuWith(0, p)
		setUsageFromProcesses(g)
		// 19 GiB of the 72 GiB reserved is unallocated: fragmented, but the leak grew 48 GiB.
		r := Classify(pytorchOOM(3*gib, 500*mib, p.Bytes-20*gib, p.Bytes-gib), g, DefaultThresholds())
		if r.Cause != CauseMemoryLeak || !slices.Equal(r.Contributing, []string{CauseFragmentation}) {
			t.Fatalf("got %s %v: %s", r.Cause, r.Contributing, r.Evidence)
		}
	})
	t.Run("a near-full workload that would fit alone yields to the tenant", func(t *testing.T) {
		g := gpuWith(0, proc(100, "python", "aaaa", 69*gib), proc(300, "other", "bbbb", 9*gib))
		r := Classify(pytorchOOM(4*gib, 900*mib, 68*gib, 68*gib+500*mib), g, DefaultThresholds())
		if r.Cause != CauseOtherTenant || !slices.Equal(r.Contributing, []string{CauseWorkloadTooLarge}) {
			t.Fatalf("got %s %v: %s", r.Cause, r.Contributing, r.Evidence)
		}
	})
}

// TestImpossibleValuesDecideNothing: each input is a true cause's state plus a value that
// cannot be true; the value must neither create a cause nor appear as its evidence.
func TestImpossibleValuesDecideNothing(t *testing.T) {
	flatGPU := func() *GPUState { return gpuWith(0, proc(100, "python", "aaaa", 40*gib)) }
	tests := []struct {
		name   string
		oom    OOM
		gpu    func() *GPUState
		not    string // the cause the impossible value would have made
		quoted string // the note in the evidence
	}{
		{"usage samples above the GPU's total make no leak", pytorchOOM(2*gib, 900*mib, 39*gib, 39*gib+200*mib),
			func() *GPUState {
				g := flatGPU()
				g.Processes[0].Series = series(func(s float64) float64 { return s * float64(10*gib) })
				g.Usage = series(func(s float64) float64 { return s * float64(10*gib) })
				return g
			}, CauseMemoryLeak, "above the GPU's total"},
		{"unattributed above the total is no zombie", pytorchOOM(2*gib, 900*mib, 39*gib, 39*gib+200*mib),
			func() *GPUState { g := flatGPU(); g.Unattributed = 1 << 50; return g }, CauseZombieContext, "unattributed of"},
		{"a tenant holding more than the GPU", pytorchOOM(2*gib, 900*mib, 39*gib, 39*gib+200*mib),
			func() *GPUState {
				return gpuWith(0, proc(100, "python", "aaaa", 40*gib), proc(300, "other", "bbbb", 900*gib))
			}, CauseOtherTenant, "pid 300's"},
		{"a billion retired pages", pytorchOOM(2*gib, 900*mib, 39*gib, 39*gib+200*mib),
			func() *GPUState { g := flatGPU(); g.RetiredPages = map[string]int64{"double_bit_ecc": 1e9}; return g },
			CauseCapacityLoss, "retired pages"},
		{"allocated above reserved in the message", pytorchOOM(2*gib, 900*mib, 70*gib, 30*gib),
			flatGPU, CauseWorkloadTooLarge, "allocated 70.0 GiB above its reserved"},
		{"the message's reserved far above the GPU", pytorchOOM(2*gib, 900*mib, 30*gib, 900*gib),
			flatGPU, CauseFragmentation, "reserved of 900.0 GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.gpu()
			before := in.Processes[0].Series[0]
			r := Classify(tt.oom, in, DefaultThresholds())
			if r.Cause == tt.not || slices.Contains(r.Contributing, tt.not) {
				t.Fatalf("impossible value decided %s: %s", tt.not, r.Evidence)
			}
			if !strings.Contains(r.Evidence, "ignored as impossible") || !strings.Contains(r.Evidence, tt.quoted) {
				t.Fatalf("evidence does not say what it ignored: %s", r.Evidence)
			}
			if in.Processes[0].Series[0] != before {
				t.Fatal("the caller's state was modified")
			}
			checkResult(t, r)
		})
	}
	// The OOM's own time years ahead of every sample: the leak fit sees nothing after the
	// sample horizon, and nothing panics.
	o := pytorchOOM(2*gib, 900*mib, 39*gib, 39*gib+200*mib)
	o.Time = oomTime.AddDate(5, 0, 0)
	checkResult(t, Classify(o, flatGPU(), DefaultThresholds()))
}

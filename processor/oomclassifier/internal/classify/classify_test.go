package classify

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestClassifyCauses crafts a GPU state per cause in which that cause must win.
func TestClassifyCauses(t *testing.T) {
	tests := []struct {
		name         string
		oom          OOM
		gpu          *GPUState
		cause        string
		contributing []string
		confidence   string
		evidence     []string // substrings the evidence must hold
	}{
		{
			name: "gpu_fault: Xid 79 shortly before the OOM",
			oom:  pytorchOOM(2*gib, 900*mib, 70*gib, 71*gib),
			gpu: func() *GPUState {
				g := gpuWith(0, proc(100, "python", "aaaa", 72*gib))
				g.Xids = []XidEvent{
					{T: oomTime.Add(-time.Hour), Code: 79, Fault: true}, // outside the window around the OOM
					{T: oomTime.Add(-12 * time.Second), Code: 79, Fault: true, Description: "GPU has fallen off the bus"},
					{T: oomTime.Add(-5 * time.Second), Code: 94, Fault: false},
				}
				return g
			}(),
			cause:        CauseGPUFault,
			contributing: []string{CauseWorkloadTooLarge},
			confidence:   ConfidenceHigh,
			evidence:     []string{"Xid 79", "fallen off the bus", "12s before the OOM"},
		},
		{
			name:         "zombie_context: 17.5 GiB no process accounts for",
			oom:          pytorchOOM(4*gib, 1*gib, 60*gib, 60*gib+100*mib),
			gpu:          gpuWith(17*gib+512*mib, proc(100, "python", "aaaa", 60*gib)),
			cause:        CauseZombieContext,
			contributing: nil, // 60 GiB + 4 GiB fits a 79.6 GiB GPU: the workload alone is not too large
			confidence:   ConfidenceHigh,
			evidence:     []string{"17.5 GiB", "no live process", "needed 3.0 GiB more than the 1.0 GiB free"},
		},
		{
			name: "zombie_context: derived when unattributed is unknown",
			oom:  pytorchOOM(4*gib, 1*gib, 30*gib, 30*gib),
			gpu: func() *GPUState {
				g := gpuWith(40*gib, proc(100, "python", "aaaa", 30*gib))
				g.Unattributed = -1
				return g
			}(),
			cause:      CauseZombieContext,
			confidence: ConfidenceHigh,
			evidence:   []string{"40.0 GiB"},
		},
		{
			name:       "other_tenant: another container holds 18 GiB",
			oom:        pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib),
			gpu:        gpuWith(0, proc(100, "python", "aaaa", 60*gib), proc(4242, "python", "3f2a1b2c3d4e5f60", 18*gib)),
			cause:      CauseOtherTenant,
			confidence: ConfidenceHigh,
			evidence:   []string{"18.0 GiB", "pid 4242 (python, container 3f2a1b2c3d4e…)", "outside the failing container", "needed 1.1 GiB more than the 900.0 MiB free"},
		},
		{
			name: "other_tenant: failing pid unlisted, found by the message's process bytes",
			oom: func() OOM {
				o := pytorchOOM(2*gib, 900*mib, 58*gib, 59*gib)
				o.PID, o.ProcessBytes = 7, 60*gib+10*mib
				return o
			}(),
			gpu:        gpuWith(0, proc(100, "python", "aaaa", 60*gib), proc(4242, "vllm", "bbbb", 18*gib)),
			cause:      CauseOtherTenant,
			confidence: ConfidenceMedium,
			evidence:   []string{"pid 4242"},
		},
		{
			name: "worker_context_overhead: 20 workers with a 500 MiB context each",
			oom:  pytorchOOM(2*gib, 600*mib, 62*gib, 62*gib+512*mib),
			gpu: func() *GPUState {
				ps := []Process{proc(100, "python", "aaaa", 63*gib)}
				for i := range 20 {
					ps = append(ps, proc(200+i, "pt_data_worker", "aaaa", 500*mib))
				}
				return gpuWith(0, ps...)
			}(),
			cause:      CauseWorkerContextOverhead,
			confidence: ConfidenceHigh,
			evidence:   []string{"20 helper processes", "about 500.0 MiB", "main process's 63.0 GiB", "9.8 GiB in all"},
		},
		{
			name:       "fragmentation: 20 GiB reserved but unallocated",
			oom:        pytorchOOM(4*gib, 1*gib, 55*gib, 75*gib),
			gpu:        gpuWith(0, proc(100, "python", "aaaa", 77*gib)),
			cause:      CauseFragmentation,
			confidence: ConfidenceHigh,
			evidence:   []string{"75.0 GiB reserved", "55.0 GiB allocated", "20.0 GiB"},
		},
		{
			name: "memory_leak: load step, then 48 MiB/s for 14 minutes",
			oom:  pytorchOOM(2*gib, 500*mib, 76*gib, 76*gib+200*mib),
			gpu: func() *GPUState {
				p := proc(100, "python", "aaaa", 0)
				p.Series = series(func(s float64) float64 {
					if s < 40 {
						return 0
					}
					return float64(36*gib) + (s-40)*48*float64(mib)
				})
				p.Bytes = int64(p.Series[len(p.Series)-1].V)
				g := gpuWith(0, p)
				setUsageFromProcesses(g)
				return g
			}(),
			cause:        CauseMemoryLeak,
			contributing: nil,
			confidence:   ConfidenceHigh,
			evidence:     []string{"grew 48.0 MiB/s", "14m19s", "R²=1.00", "would have filled in ~15 min"},
		},
		{
			name: "capacity_loss: total 8 GiB below the H100's usual",
			oom:  pytorchOOM(4*gib, 1*gib, 68*gib, 68*gib+300*mib),
			gpu: func() *GPUState {
				g := gpuWith(0, proc(100, "python", "aaaa", 70*gib))
				g.Total = 71*gib + 512*mib
				g.Free = g.Total - g.Used
				g.RetiredPages = map[string]int64{"single_bit_ecc": 10, "double_bit_ecc": 2}
				return g
			}(),
			cause:        CauseCapacityLoss,
			contributing: []string{CauseWorkloadTooLarge},
			confidence:   ConfidenceHigh,
			evidence:     []string{"71.5 GiB total", "below the usual 79.6 GiB", "12 retired pages remove about 768.0 KiB"},
		},
		{
			name:       "workload_too_large: dense and flat at capacity",
			oom:        pytorchOOM(2*gib, 900*mib, 77*gib, 77*gib+400*mib),
			gpu:        gpuWith(0, proc(100, "python", "aaaa", 78*gib)),
			cause:      CauseWorkloadTooLarge,
			confidence: ConfidenceHigh,
			evidence:   []string{"77.4 GiB reserved", "alone fills the GPU"},
		},
		{
			name:       "workload_too_large: one request larger than the GPU, no GPU state",
			oom:        pytorchOOM(100*gib, -1, -1, -1),
			gpu:        nil,
			cause:      CauseWorkloadTooLarge,
			confidence: ConfidenceLow, // no GPU: the rules that need metrics were not checked
			evidence:   []string{"100.0 GiB", "larger than the GPU's whole 79.6 GiB", "no GPU was matched"},
		},
		{
			name:       "unknown: nothing known",
			oom:        blankOOM(),
			gpu:        nil,
			cause:      CauseUnknown,
			confidence: ConfidenceLow,
			evidence:   []string{"no GPU metrics", "no request size", "no allocator numbers"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Classify(tt.oom, tt.gpu, DefaultThresholds())
			if r.Cause != tt.cause || !slices.Equal(r.Contributing, tt.contributing) {
				t.Fatalf("cause %q contributing %v, want %q %v\nevidence: %s", r.Cause, r.Contributing, tt.cause, tt.contributing, r.Evidence)
			}
			if r.Confidence != tt.confidence {
				t.Errorf("confidence %q, want %q", r.Confidence, tt.confidence)
			}
			for _, want := range tt.evidence {
				if !strings.Contains(r.Evidence, want) {
					t.Errorf("evidence lacks %q:\n%s", want, r.Evidence)
				}
			}
			if !strings.HasSuffix(r.Evidence, ".") || strings.Count(r.Evidence, ". ") > 0 {
				t.Errorf("evidence is not one sentence: %q", r.Evidence)
			}
			if r.Recommendation == "" {
				t.Error("no recommendation")
			}
			t.Logf("%s: %s", r.Cause, r.Evidence)
		})
	}
}

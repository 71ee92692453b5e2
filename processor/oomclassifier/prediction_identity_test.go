package oomclassifier

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

// predictedInPod is predictedLogs about pid in pod's container, as the receiver writes it.
func predictedInPod(at time.Time, pid int64, pod kpod) plog.Logs {
	ld := predictedLogs(at, pid)
	a := firstRecord(ld).Attributes()
	a.PutStr(attrContainerID, pod.cid)
	a.PutStr(attrPodUID, pod.uid)
	return ld
}

// feedReuse sends 40 s of GPU-a on host n: pid 3101 in first ramps for 20 s, then holds
// 38.3 GiB flat as second's process from second 20 + gap on (nothing in between). A zero pod
// is a process of no container.
func feedReuse(t *testing.T, p processors, first, second kpod, gap int) {
	t.Helper()
	for s := 0; s < 40; s++ {
		g := kgpu{hwID: "GPU-a", bus: "00000000:3B:00.0", model: "NVIDIA A100-SXM4-40GB", total: 40 * gib}
		switch {
		case s < 20:
			g.procs = []kproc{{pid: 3101, pod: first, bytes: flatBytes(20*gib + int64(s)*500<<20)}}
		case s >= 20+gap:
			g.procs = []kproc{{pid: 3101, pod: second, bytes: flatBytes(38*gib + 300<<20)}}
		}
		md := pmetric.NewMetrics()
		g.appendTo(md, "n", s)
		require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), md))
	}
}

// TestForecastDoesNotTransferToReusedPid: the receiver forecast pid 3101 full while it
// ramped; 3101 then exits and a new process with the same pid runs flat until its OOM. The
// forecast belonged to the first process: the flat OOM is not its memory_leak, and the
// evidence says why the forecast did not count. The same process kept is still a leak.
func TestForecastDoesNotTransferToReusedPid(t *testing.T) {
	a, b := podOf(1), podOf(2)
	for _, tt := range []struct {
		name          string
		first, second kpod
		gap           int
		leak          bool
		why           string
	}{
		{name: "another container, no gap", first: a, second: b,
			why: "; the gpu_mem receiver's forecast for pid 3101 did not count: pid 3101 now runs in container c20ffee0ffee…, not in container c10ffee0ffee… the forecast named: that process had exited and the pid was reused."},
		{name: "no container, exited and reused", gap: 5,
			why: "; the gpu_mem receiver's forecast for pid 3101 did not count: GPU-a reported without pid 3101 10s after the forecast, so the process it named had exited and the pid was reused."},
		{name: "same container throughout", first: a, second: a, leak: true},
		{name: "no container, never left", leak: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newProcessors(t, testConfig(0), nopSettings())
			feedReuse(t, p, tt.first, tt.second, tt.gap)
			pred := predictedLogs(t0.Add(10*time.Second), 3101)
			if tt.first.cid != "" {
				pred = predictedInPod(t0.Add(10*time.Second), 3101, tt.first)
			}
			require.NoError(t, p.logs.ConsumeLogs(context.Background(), pred))
			at := classified(t, p, logsWith("n", t0.Add(38*time.Second), text(fullOOM)))
			if tt.leak {
				assert.Equal(t, classify.CauseMemoryLeak, at[attrCause], "evidence: %v", at[attrEvidence])
				assert.Contains(t, at[attrEvidence], "The gpu_mem receiver predicted this OOM on GPU-a")
				return
			}
			assert.NotEqual(t, classify.CauseMemoryLeak, at[attrCause], "evidence: %v", at[attrEvidence])
			if c, ok := at[attrContributing].([]any); ok {
				assert.NotContains(t, c, classify.CauseMemoryLeak)
			}
			assert.Contains(t, at[attrEvidence], tt.why)
		})
	}
}

package oomclassifier

import (
	"context"
	"testing"
	"time"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/diagnose"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
	"github.com/stretchr/testify/require"
)

// TestPooledClassificationMatchesFresh guards the pooled buffers BenchmarkClassifyFullWindow
// depends on: OOMs of different shapes (a fault Xid, a leaking series, none of those)
// classified one after another through the pool decide exactly as each would on fresh state.
func TestPooledClassificationMatchesFresh(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	inst := p.logs.(*logsProcessor).inst
	// The OOMs below read one message as several pids' (GPU-1's pid 500 holds 20 GiB, the
	// message says 30): the log clock check would rightly doubt them, and it re-reads the
	// window, which the fresh reference below does not. It is compared with pooled buffers
	// in TestSkewCheckReusesPooledBuffers.
	inst.thresholds.SkewSearch = 0
	ctx := context.Background()
	for i := 0; i < 600; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		leak := 10*gib + int64(i)*40<<20 // pid 3101 ramps up to the OOM
		require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(
			gpuMetrics{host: "n", hwID: "GPU-0", busID: "00000000:3B:00.0", index: 0, at: at, used: leak + 2*gib, total: 40 * gib,
				procs: map[int64]int64{3101: leak, 3377: 2 * gib}},
			gpuMetrics{host: "n", hwID: "GPU-1", index: 1, at: at, used: 20 * gib, total: 40 * gib, procs: map[int64]int64{500: 20 * gib}},
		)))
	}
	inst.store.ObserveXid("n", window.Xid{T: t0.Add(590 * time.Second), Code: 79, Fault: true, BusID: "00000000:3B:00.0"})
	at := t0.Add(599 * time.Second)
	var ooms []oomRecord
	for _, pid := range []int{3101, 500, 3377, -1, 3101} {
		ld := logsWith("n", at, text(pytorchOOM))
		o, ok := findOOM(firstRecord(ld), ld.ResourceLogs().At(0).Resource().Attributes())
		require.True(t, ok)
		o.pid = pid
		ooms = append(ooms, o)
	}
	for round := 0; round < 3; round++ {
		for i, o := range ooms {
			var gpu *classify.GPUState
			if snap, ok := inst.store.Snapshot(window.Query{Host: o.host, At: o.at, PID: o.pid, DeviceIndex: o.msg.DeviceIndex}); ok {
				gpu = diagnose.GPUState(&snap)
			}
			want := classify.Classify(classify.OOM{
				Framework: o.msg.Framework, RequestedBytes: o.msg.RequestedBytes, TotalBytes: o.msg.TotalBytes,
				FreeBytes: o.msg.FreeBytes, AllocatedBytes: o.msg.AllocatedBytes, ReservedBytes: o.msg.ReservedBytes,
				ProcessBytes: o.msg.ProcessBytes, DeviceIndex: o.msg.DeviceIndex, PID: o.pid, Time: o.at,
			}, gpu, inst.thresholds)
			o.rec.Attributes().Clear()
			require.Equal(t, want, classifyOOM(o, inst), "round %d, OOM %d", round, i)
		}
	}
}

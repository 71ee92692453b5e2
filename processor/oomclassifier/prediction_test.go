package oomclassifier

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

// fullOOM: pid 3101 alone fills a 40 GiB GPU; from the numbers alone it did not fit.
const fullOOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 39.39 GiB of which 1.06 GiB is free. Process 3101 has 38.30 GiB memory in use. Of the allocated memory 37.00 GiB is allocated by PyTorch, and 820.00 MiB is reserved by PyTorch but unallocated."

// predictedLogs is a gpu_mem predicted-OOM record for GPU-a on host n about pid.
func predictedLogs(at time.Time, pid int64) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(resHostName, "n")
	rl.Resource().Attributes().PutStr(attrHWID, "GPU-a")
	rec := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.SetTimestamp(pcommon.NewTimestampFromTime(at))
	rec.SetSeverityNumber(plog.SeverityNumberWarn)
	rec.SetEventName(eventOOMPredicted)
	a := rec.Attributes()
	a.PutStr(attrEventName, eventOOMPredicted)
	a.PutDouble(attrRunway, 600)
	a.PutDouble(attrGrowth, 50<<20)
	a.PutInt(attrProcessPID, pid)
	a.PutStr(attrProcessName, "python3")
	a.PutDouble(attrProcessGrowth, 49<<20)
	// The text says what will happen, in words an OOM parser could mistake for one.
	rec.Body().SetStr("GPU memory will be full in about 10 min: CUDA out of memory is coming. Tried to allocate nothing yet.")
	return ld
}

func flatGPU(t *testing.T, p processors) {
	t.Helper()
	for i := 0; i < 30; i++ {
		require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
			host: "n", hwID: "GPU-a", at: t0.Add(time.Duration(i) * time.Second), used: 38*gib + 300<<20, total: 40 * gib,
			procs: map[int64]int64{3101: 38*gib + 300<<20},
		})))
	}
}

// The receiver's forecast is leak evidence: with it the OOM of the process it named is a
// memory_leak (the window's 30 s of flat history could not show the ramp); the forecast
// record itself passes byte for byte, never parsed as an OOM.
func TestPredictedOOMRecordIsLeakEvidence(t *testing.T) {
	ctx := context.Background()
	without := newProcessors(t, testConfig(0), nopSettings())
	flatGPU(t, without)
	require.NoError(t, without.logs.ConsumeLogs(ctx, logsWith("n", t0.Add(25*time.Second), text(fullOOM))))
	assert.NotEqual(t, classify.CauseMemoryLeak, firstRecord(without.lsink.AllLogs()[0]).Attributes().AsRaw()[attrCause])

	p := newProcessors(t, testConfig(0), nopSettings())
	flatGPU(t, p)
	pred := predictedLogs(t0.Add(10*time.Second), 3101)
	want := marshalLogs(t, pred)
	require.NoError(t, p.logs.ConsumeLogs(ctx, pred))
	assert.Equal(t, want, marshalLogs(t, p.lsink.AllLogs()[0]), "the forecast passes untouched")

	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0.Add(25*time.Second), text(fullOOM))))
	a := firstRecord(p.lsink.AllLogs()[1]).Attributes().AsRaw()
	assert.Equal(t, classify.CauseMemoryLeak, a[attrCause], "evidence: %v", a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "The gpu_mem receiver predicted this OOM on GPU-a")
	assert.Contains(t, a[attrEvidence], "15s before it")
	assert.Contains(t, a[attrEvidence], "fastest-growing process pid 3101 (python3) at 49.0 MiB/s")
	assert.Contains(t, a[attrRecommendation], "50.0 MiB/s")
}

// A forecast about another process on the GPU is not evidence about this one.
func TestPredictedOOMOfAnotherProcessIsNotEvidence(t *testing.T) {
	ctx := context.Background()
	p := newProcessors(t, testConfig(0), nopSettings())
	flatGPU(t, p)
	require.NoError(t, p.logs.ConsumeLogs(ctx, predictedLogs(t0.Add(10*time.Second), 4444)))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0.Add(25*time.Second), text(fullOOM))))
	assert.NotEqual(t, classify.CauseMemoryLeak, firstRecord(p.lsink.AllLogs()[1]).Attributes().AsRaw()[attrCause])
}

// The store keeps a few forecasts per GPU and forgets those older than the window.
func TestPredictionsBounded(t *testing.T) {
	s := newPredictions(15 * time.Minute)
	for i := 0; i < 100; i++ {
		s.observe("h", "GPU-a", classify.Prediction{T: t0.Add(time.Duration(i) * time.Second)})
	}
	got := s.ForGPU(nil, "h", "GPU-a", t0.Add(time.Hour))
	assert.Empty(t, got, "all older than the window")
	got = s.ForGPU(nil, "h", "GPU-a", t0.Add(100*time.Second))
	require.Len(t, got, maxPredictionsPerGPU)
	assert.Equal(t, t0.Add(99*time.Second), got[len(got)-1].T)
	assert.Empty(t, s.ForGPU(nil, "h", "GPU-b", t0.Add(100*time.Second)))
}

package oomclassifier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

// oddBodies are records the processor must pass through untouched and without panic.
func oddBodies() []func(plog.LogRecord) {
	big := strings.Repeat("x", 1<<20)
	return []func(plog.LogRecord){
		func(plog.LogRecord) {}, // empty body
		text(""),
		text("INFO step 10 loss=0.31"),
		text("Traceback (most recent call last):\n  File \"x.py\"\nRuntimeError: CUDA error: an illegal memory access was encountered"),
		text("Out of memory: Killed process 4242 (python) total-vm:123kB"), // host OOM killer
		text("\xff\xfe invalid \xc3\x28 utf-8 memory OOM"),
		text(big),
		func(r plog.LogRecord) { r.Body().SetInt(42) },
		func(r plog.LogRecord) { r.Body().SetDouble(1.5) },
		func(r plog.LogRecord) { r.Body().SetBool(true) },
		func(r plog.LogRecord) { r.Body().SetEmptyBytes().FromRaw([]byte("CUDA out of memory\x00\x01")) },
		func(r plog.LogRecord) {
			s := r.Body().SetEmptySlice()
			s.AppendEmpty().SetStr("CUDA out of memory. Tried to allocate 2.00 GiB")
			s.AppendEmpty().SetInt(1)
		},
		func(r plog.LogRecord) {
			m := r.Body().SetEmptyMap()
			m.PutInt("message", 7)
			m.PutEmptyMap("log").PutStr("message", "nested maps are not searched")
			m.PutEmptyBytes("error")
		},
		func(r plog.LogRecord) {
			r.Body().SetEmptyMap().PutStr("msg", "all good")
			r.Attributes().PutInt(attrExceptionMsg, 3) // wrong type
		},
	}
}

func TestNonOOMRecordsPassByteForByte(t *testing.T) {
	for _, wait := range []time.Duration{0, time.Hour} {
		p := newProcessors(t, testConfig(wait), nopSettings())
		in := logsWith("node1", t0, oddBodies()...)
		want := marshalLogs(t, in)
		require.NoError(t, p.logs.ConsumeLogs(context.Background(), in))
		require.Len(t, p.lsink.AllLogs(), 1, "no OOM: forwarded at once even with a long decision_wait")
		assert.Equal(t, want, marshalLogs(t, p.lsink.AllLogs()[0]))
	}
}

func TestOOMEnrichedWhereverTheTextLives(t *testing.T) {
	withType := func(r plog.LogRecord) {
		r.Attributes().PutStr(attrExceptionType, "torch.OutOfMemoryError")
		r.Attributes().PutStr(attrExceptionMsg, strings.TrimPrefix(pytorchOOM, "torch.OutOfMemoryError: "))
	}
	cases := map[string]func(plog.LogRecord){
		"string body in traceback": text("Traceback (most recent call last):\n  File \"train.py\", line 9\n" + pytorchOOM + "\n"),
		"map body message":         func(r plog.LogRecord) { r.Body().SetEmptyMap().PutStr("message", pytorchOOM) },
		"map body msg":             func(r plog.LogRecord) { r.Body().SetEmptyMap().PutStr("msg", pytorchOOM) },
		"map body log":             func(r plog.LogRecord) { r.Body().SetEmptyMap().PutStr("log", pytorchOOM) },
		"map body error":           func(r plog.LogRecord) { r.Body().SetEmptyMap().PutStr("error", pytorchOOM) },
		"exception attributes":     withType,
		"after 1 MiB of log":       text(strings.Repeat("noise\n", 1<<20/6) + pytorchOOM),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			p := newProcessors(t, testConfig(0), nopSettings())
			require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("node1", t0, body)))
			attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
			assert.Equal(t, "pytorch", attrs[attrFramework])
			assert.Equal(t, int64(4*gib), attrs[attrRequestedBytes])
			assert.Equal(t, int64(0), attrs[attrDeviceIndex])
			assert.Equal(t, []any{map[string]any{"process.pid": int64(3377), "bytes": int64(7838315315)}}, attrs[attrOtherProcesses])
			assert.Contains(t, attrs, attrCause)
			assert.Contains(t, attrs, attrConfidence)
			assert.NotEmpty(t, attrs[attrEvidence])
			assert.NotEmpty(t, attrs[attrRecommendation])
			assert.NotContains(t, attrs, attrHWID, "no metrics: no GPU to name")
		})
	}
}

func TestAbsentNumbersAreNotWritten(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	bare := "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510"
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("", t0, text(bare))))
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, "pytorch", attrs[attrFramework])
	assert.Equal(t, classify.CauseUnknown, attrs[attrCause])
	for _, k := range []string{attrRequestedBytes, attrTotalBytes, attrFreeBytes, attrAllocatedBytes,
		attrReservedBytes, attrProcessBytes, attrDeviceIndex, attrOtherProcesses, attrHWID} {
		assert.NotContains(t, attrs, k)
	}
}

func TestNeverOverwrite(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	ld := logsWith("", t0, func(r plog.LogRecord) {
		r.Body().SetStr(pytorchOOM)
		r.Attributes().PutStr(attrConfidence, "set by the user")
		r.Attributes().PutStr(attrHWID, "GPU-user")
		r.Attributes().PutInt(attrRequestedBytes, 1)
		r.Attributes().PutStr(attrOtherProcesses, "kept")
	})
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, "set by the user", attrs[attrConfidence])
	assert.Equal(t, "GPU-user", attrs[attrHWID])
	assert.Equal(t, int64(1), attrs[attrRequestedBytes])
	assert.Equal(t, "kept", attrs[attrOtherProcesses])
	assert.Equal(t, "pytorch", attrs[attrFramework], "absent ones are still added")
}

// TestClassifiedUpstreamPassesUntouched: a record that already carries gpu.oom.cause (an
// agent's classifier ran on it before it reached this gateway) is forwarded byte for byte at
// once, even with a long decision_wait, and not counted as an OOM again; an unclassified OOM
// in the same batch is classified.
func TestClassifiedUpstreamPassesUntouched(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	p := newProcessors(t, testConfig(0), set)
	agent := newProcessors(t, testConfig(0), nopSettings())
	require.NoError(t, agent.logs.ConsumeLogs(context.Background(), logsWith("node1", t0, text(pytorchOOM))))
	classified := agent.lsink.AllLogs()[0]
	require.Contains(t, firstRecord(classified).Attributes().AsRaw(), attrCause)
	want := marshalLogs(t, classified)

	gw := newProcessors(t, testConfig(time.Hour), set)
	require.NoError(t, gw.logs.ConsumeLogs(context.Background(), classified))
	require.Len(t, gw.lsink.AllLogs(), 1, "forwarded at once: nothing to wait for")
	assert.Equal(t, want, marshalLogs(t, gw.lsink.AllLogs()[0]))
	_, err := tel.GetMetric(metadata.MetricOOMs)
	assert.Error(t, err, "no OOM counted at the gateway")

	require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("node1", t0, text(pytorchOOM))))
	assert.Contains(t, firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw(), attrCause, "an unclassified OOM is classified")
}

func TestMatchedByPIDAndHostAcrossGPUs(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	ctx := context.Background()
	for i := 0; i < 30; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(
			gpuMetrics{host: "node1", hwID: "GPU-0", index: 0, at: at, used: 30 * gib, total: 40 * gib, procs: map[int64]int64{100: 30 * gib}},
			gpuMetrics{host: "node1", hwID: "GPU-1", index: 1, at: at, used: 38 * gib, total: 40 * gib, procs: map[int64]int64{3101: 30 * gib, 3377: 7 * gib}},
			gpuMetrics{host: "node2", hwID: "GPU-9", index: 0, at: at, used: 1, total: 40 * gib},
		)))
	}
	// The message says GPU 0 (its CUDA_VISIBLE_DEVICES ordinal) but pid 3101 runs on GPU-1.
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("node1", t0.Add(20*time.Second), text(pytorchOOM))))
	assert.Equal(t, "GPU-1", firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()[attrHWID])

	// Without a pid the ordinal decides; on node2 the only GPU does.
	noPID := "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; 10.62 GiB already allocated; 145.81 MiB free; 10.66 GiB cached)"
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("node1", t0.Add(20*time.Second), text(noPID))))
	assert.Equal(t, "GPU-0", firstRecord(p.lsink.AllLogs()[1]).Attributes().AsRaw()[attrHWID])
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("node2", t0.Add(20*time.Second), text(noPID))))
	assert.Equal(t, "GPU-9", firstRecord(p.lsink.AllLogs()[2]).Attributes().AsRaw()[attrHWID])
	// A record without host.name matches only metrics without one.
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("", t0.Add(20*time.Second), text(noPID))))
	assert.NotContains(t, firstRecord(p.lsink.AllLogs()[3]).Attributes().AsRaw(), attrHWID)
}

func TestMetricsPassThroughUnchanged(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	md := metricsOf(gpuMetrics{host: "h", hwID: "GPU-a", at: t0, used: 1, total: 2, procs: map[int64]int64{1: 1}})
	m := &pmetric.ProtoMarshaler{}
	want, err := m.MarshalMetrics(md)
	require.NoError(t, err)
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), md))
	require.Len(t, p.msink.AllMetrics(), 1)
	got, err := m.MarshalMetrics(p.msink.AllMetrics()[0])
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 1, p.logs.(*logsProcessor).inst.store.Len(), "and observed")
}

func TestKernelXidLineAnnotatedAndEvidence(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	ctx := context.Background()
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{host: "n", hwID: "GPU-a", busID: "00000000:3B:00.0", at: t0, used: 39 * gib, total: 40 * gib, procs: map[int64]int64{3101: 30 * gib}})))
	syslog := func(r plog.LogRecord) { r.Body().SetEmptyMap().PutStr("MESSAGE", "kernel: "+kernelXidLine) }
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0.Add(-time.Second), syslog, text(pytorchOOM))))
	out := p.lsink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	xa := out.At(0).Attributes().AsRaw()
	assert.Equal(t, int64(79), xa[attrXid])
	assert.Equal(t, "hardware", xa[attrXidOrigin])
	assert.Equal(t, "GPU has fallen off the bus", xa[attrXidDescription])
	assert.Equal(t, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", xa[attrXidMnemonic])
	assert.Equal(t, "RESTART_BM", xa[attrXidAction])
	assert.Equal(t, "00000000:3B:00.0", xa[attrPCIBusID])
	assert.Equal(t, int64(1234), xa[attrProcessPID])
	assert.Equal(t, "python3", xa[attrProcessName])
	oa := out.At(1).Attributes().AsRaw()
	assert.Equal(t, classify.CauseGPUFault, oa[attrCause], "the Xid of the same batch is evidence")
	assert.Equal(t, "GPU-a", oa[attrHWID])
}

func TestReceiverXidRecordIsEvidenceNotReannotated(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	ctx := context.Background()
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{host: "n", hwID: "GPU-a", at: t0, used: 39 * gib, total: 40 * gib})))
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(resHostName, "n")
	rl.Resource().Attributes().PutStr(attrHWID, "GPU-a")
	rec := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.SetTimestamp(pcommon.NewTimestampFromTime(t0))
	rec.SetEventName(eventXid)
	rec.Attributes().PutInt(attrXid, 48)
	rec.Body().SetStr("NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=x, An uncorrectable double bit error")
	want := marshalLogs(t, ld)
	require.NoError(t, p.logs.ConsumeLogs(ctx, ld))
	assert.Equal(t, want, marshalLogs(t, p.lsink.AllLogs()[0]), "the receiver's record already carries its attributes")

	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0.Add(time.Second), text(pytorchOOM))))
	assert.Equal(t, classify.CauseGPUFault, firstRecord(p.lsink.AllLogs()[1]).Attributes().AsRaw()[attrCause])
}

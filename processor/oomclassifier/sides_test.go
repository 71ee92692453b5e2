package oomclassifier

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestWarnOnceWhenLogsOnly: an id in logs pipelines only warns once at start, however many
// logs sides it has and however often they start; an id also in a metrics pipeline never does.
func TestWarnOnceWhenLogsOnly(t *testing.T) {
	for _, withMetrics := range []bool{false, true} {
		core, logs := observer.New(zapcore.WarnLevel)
		set := nopSettings()
		set.Logger = zap.New(core)
		pf := (&factory{clock: realClock{}}).processorFactory()
		cfg := testConfig(0)
		ctx := context.Background()
		if withMetrics {
			mp, err := pf.CreateMetrics(ctx, set, cfg, consumertest.NewNop())
			require.NoError(t, err)
			require.NoError(t, mp.Start(ctx, componenttest.NewNopHost()))
			t.Cleanup(func() { require.NoError(t, mp.Shutdown(ctx)) })
		}
		for range 2 { // two logs pipelines with the same id
			lp, err := pf.CreateLogs(ctx, set, cfg, consumertest.NewNop())
			require.NoError(t, err)
			require.NoError(t, lp.Start(ctx, componenttest.NewNopHost()))
			require.NoError(t, lp.Start(ctx, componenttest.NewNopHost()))
			t.Cleanup(func() { require.NoError(t, lp.Shutdown(ctx)) })
		}
		warned := logs.FilterMessageSnippet("logs pipeline only").Len()
		if withMetrics {
			assert.Zero(t, warned, "metrics side present: no warning")
		} else {
			assert.Equal(t, 1, warned, "logs only: one warning")
		}
	}
}

// TestUnknownEvidenceSaysWhatIsMissing: when no GPU is matched, the evidence names which of
// the reasons it was.
func TestUnknownEvidenceSaysWhatIsMissing(t *testing.T) {
	// A JAX-style message: a size only, nothing the message alone can decide on.
	const jaxOOM = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes."
	ctx := context.Background()
	at := t0.Add(time.Hour)

	t.Run("logs pipeline only", func(t *testing.T) {
		pf := (&factory{clock: realClock{}}).processorFactory()
		sink := new(consumertest.LogsSink)
		lp, err := pf.CreateLogs(ctx, nopSettings(), testConfig(0), sink)
		require.NoError(t, err)
		require.NoError(t, lp.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, lp.Shutdown(ctx)) })
		require.NoError(t, lp.ConsumeLogs(ctx, logsWith("n", at, text(jaxOOM))))
		ev := firstRecord(sink.AllLogs()[0]).Attributes().AsRaw()[attrEvidence]
		assert.Contains(t, ev, "no GPU metrics at all (the processor is in no metrics pipeline)")
	})

	cases := []struct {
		name    string
		metrics []gpuMetrics
		host    string
		want    string
	}{
		{"no metrics for this host", []gpuMetrics{{host: "other", hwID: "GPU-a", at: at, used: gib, total: 40 * gib}},
			"n", `no GPU metrics have arrived for host "n"`},
		{"metrics too old", []gpuMetrics{{host: "n", hwID: "GPU-a", at: at.Add(-20 * time.Minute), used: gib, total: 40 * gib}},
			"n", `the newest GPU metrics of host "n" are more than 15m0s older than the OOM`},
		{"no GPU matched", []gpuMetrics{
			{host: "n", hwID: "GPU-a", index: 0, at: at, used: gib, total: 40 * gib},
			{host: "n", hwID: "GPU-b", index: 1, at: at, used: gib, total: 40 * gib},
		}, "n", `no GPU of host "n" matched the OOM: the record names no pid, no single GPU was reporting at the OOM's time and the message gives no device ordinal`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProcessors(t, testConfig(0), nopSettings())
			require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(tc.metrics...)))
			require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith(tc.host, at, text(jaxOOM))))
			attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
			assert.Equal(t, "unknown", attrs[attrCause])
			assert.Contains(t, attrs[attrEvidence], tc.want)
			assert.NotContains(t, attrs, attrHWID)
			assert.NotContains(t, attrs, attrGPUIndex)
		})
	}
}

// TestClassifiedRecordCarriesGPUIndex: the matched GPU's NVML index travels with its hw.id.
func TestClassifiedRecordCarriesGPUIndex(t *testing.T) {
	ctx := context.Background()
	p := newProcessors(t, testConfig(0), nopSettings())
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(
		gpuMetrics{host: "n", hwID: "GPU-a", index: 0, at: t0, used: 2 * gib, total: 40 * gib, procs: map[int64]int64{77: gib}},
		gpuMetrics{host: "n", hwID: "GPU-b", index: 3, at: t0, used: 38 * gib, total: 40 * gib, procs: map[int64]int64{3101: 30 * gib, 3377: 7 * gib}},
	)))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0, text(pytorchOOM))))
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, "GPU-b", attrs[attrHWID])
	assert.Equal(t, int64(3), attrs[attrGPUIndex], "NVML's index, not the message's GPU 0")
	assert.Equal(t, int64(0), attrs[attrDeviceIndex])
}

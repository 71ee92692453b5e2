package oomclassifier

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

// leakFor feeds five minutes of pid 3101 ramping on GPU-0 of host n, one point a second from t0.
func leakFor(t *testing.T, p processors) {
	t.Helper()
	for i := 0; i < 300; i++ {
		leak := 10*gib + int64(i)*80<<20
		require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
			host: "n", hwID: "GPU-0", at: t0.Add(time.Duration(i) * time.Second), used: leak + 2*gib, total: 40 * gib,
			procs: map[int64]int64{3101: leak, 3377: 2 * gib}})))
	}
}

func droppedBy(t *testing.T, tel *componenttest.Telemetry, reason string) int64 {
	t.Helper()
	var n int64
	m, err := tel.GetMetric(metadata.MetricWindowDropped)
	if err != nil {
		return 0 // nothing dropped yet
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, _ := dp.Attributes.Value(attribute.Key("reason")); v.AsString() == reason {
			n += dp.Value
		}
	}
	return n
}

// TestFuturePointDoesNotRewriteHistory: one point a year ahead for the leaking GPU neither
// hides the leak nor makes the host look caught up (the OOM still waits for its metrics).
func TestFuturePointDoesNotRewriteHistory(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	clk := newFakeClock(t0.Add(300 * time.Second))
	p := newProcessorsClock(t, testConfig(10*time.Second), set, clk)
	leakFor(t, p)
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
		host: "n", hwID: "GPU-0", at: t0.AddDate(1, 0, 0), used: gib, total: 40 * gib})))
	assert.Positive(t, droppedBy(t, tel, "future_timestamp"))

	oomAt := t0.Add(300 * time.Second)
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("n", oomAt, text(pytorchOOM))))
	assert.Equal(t, 0, p.lsink.LogRecordCount(), "the host's metrics reach 299 s only: the OOM at 300 s waits")
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
		host: "n", hwID: "GPU-0", at: oomAt, used: 36 * gib, total: 40 * gib, procs: map[int64]int64{3101: 34 * gib, 3377: 2 * gib}})))
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == 1 }, 5*time.Second, time.Millisecond)
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, "memory_leak", attrs[attrCause], "evidence: %v", attrs[attrEvidence])
}

// TestOOMTimestampFarAheadFallsBackToObserved: an OOM record stamped a year ahead is placed at
// its observed time, and the evidence says so.
func TestOOMTimestampFarAheadFallsBackToObserved(t *testing.T) {
	clk := newFakeClock(t0.Add(300 * time.Second))
	p := newProcessorsClock(t, testConfig(0), nopSettings(), clk)
	leakFor(t, p)
	ld := logsWith("n", t0.AddDate(1, 0, 0), text(pytorchOOM))
	firstRecord(ld).SetObservedTimestamp(pcommon.NewTimestampFromTime(t0.Add(299 * time.Second)))
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, "memory_leak", attrs[attrCause], "evidence: %v", attrs[attrEvidence])
	assert.Contains(t, attrs[attrEvidence], "ahead of the collector's clock")
}

// TestAbsurdValuesAreRejected: MaxInt64 bytes, a negative value and NaN never reach the window,
// are counted, and no evidence quotes them.
func TestAbsurdValuesAreRejected(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	clk := newFakeClock(t0.Add(10 * time.Second))
	p := newProcessorsClock(t, testConfig(0), set, clk)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{host: "n", hwID: "GPU-0",
			at: t0.Add(time.Duration(i) * time.Second), used: 20 * gib, total: 40 * gib, procs: map[int64]int64{3101: 18 * gib}})))
	}
	bad := metricsOf(gpuMetrics{host: "n", hwID: "GPU-0", at: t0.Add(5 * time.Second), used: math.MaxInt64, total: math.MaxInt64,
		procs: map[int64]int64{3101: math.MaxInt64, 3377: -5}})
	nan := bad.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().AppendEmpty()
	nan.SetName(metricUnattributed)
	dp := nan.SetEmptySum().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(5 * time.Second)))
	dp.SetDoubleValue(math.NaN())
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, bad))
	assert.Equal(t, int64(5), droppedBy(t, tel, "invalid_value"), "usage, limit, two processes, NaN (free is 0 here)")

	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0.Add(5*time.Second), text(pytorchOOM))))
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.NotContains(t, attrs[attrEvidence], "EiB")
	assert.NotContains(t, attrs[attrEvidence], "PiB")
}

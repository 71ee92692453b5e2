package oomclassifier

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

func sumOf(m metricdata.Metrics) int64 {
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	return n
}

func TestTelemetryCounts(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := testConfig(0)
	cfg.MaxGPUs = 1
	p := newProcessors(t, cfg, set)
	ctx := context.Background()

	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0, text(pytorchOOM), text("hello"), text(kernelXidLine))))
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{hwID: "GPU-a", at: t0, used: 1, total: 2})))
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{hwID: "GPU-b", at: t0, used: 1, total: 2})))

	m, err := tel.GetMetric(metadata.MetricRecords)
	require.NoError(t, err)
	assert.Equal(t, int64(3), sumOf(m))
	m, err = tel.GetMetric(metadata.MetricXidLines)
	require.NoError(t, err)
	assert.Equal(t, int64(1), sumOf(m))
	m, err = tel.GetMetric(metadata.MetricOOMs)
	require.NoError(t, err)
	dps := m.Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, dps, 1)
	fw, _ := dps[0].Attributes.Value(attribute.Key("framework"))
	assert.Equal(t, "pytorch", fw.AsString())
	m, err = tel.GetMetric(metadata.MetricWindowDropped)
	require.NoError(t, err)
	assert.Equal(t, int64(1), sumOf(m), "max_gpus 1: the second GPU evicts the first")
}

// sumWhere adds the points of m whose attribute key has value.
func sumWhere(m metricdata.Metrics, key, value string) int64 {
	var n int64
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, ok := dp.Attributes.Value(attribute.Key(key)); ok && v.AsString() == value {
			n += dp.Value
		}
	}
	return n
}

// The logs side reports accepted and forwarded records through the collector's standard
// processor telemetry, and what it holds through its own counters.
func TestLogsSideStandardTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	clk := newFakeClock(t0)
	p := newProcessorsClock(t, testConfig(time.Minute), set, clk)
	ctx := context.Background()

	// 2 records held for host a, 3 forwarded in the call for host b.
	require.NoError(t, p.logs.ConsumeLogs(ctx, joined(logsWith("a", t0, text(pytorchOOM), text("x")),
		logsWith("b", t0, text("1"), text("2"), text("3")))))
	waitForTimer(t, clk)
	clk.Advance(time.Minute)
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == 5 }, 5*time.Second, time.Millisecond)

	get := func(name string) metricdata.Metrics {
		m, err := tel.GetMetric(name)
		require.NoError(t, err, name)
		return m
	}
	assert.Equal(t, int64(5), sumWhere(get("otelcol_processor_incoming_items"), "otel.signal", "logs"))
	assert.Equal(t, int64(3), sumWhere(get("otelcol_processor_outgoing_items"), "otel.signal", "logs"))
	assert.Equal(t, int64(2), sumOf(get(metadata.MetricHeld)))
	assert.Equal(t, int64(2), sumWhere(get(metadata.MetricReleased), "reason", releaseDue))
}

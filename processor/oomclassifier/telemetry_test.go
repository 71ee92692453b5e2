package oomclassifier

import (
	"context"
	"testing"

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

package oomclassifier

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// One warning per pipeline whose data lacks host.name, in that pipeline's logger (the
// collector's carries otelcol.pipeline.id), however many batches follow; none while every
// resource carries it.
func TestHostNameWarning(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	metricsSet, logsSet := nopSettings(), nopSettings()
	metricsSet.Logger = zap.New(core).With(zap.String("otelcol.pipeline.id", "metrics"))
	logsSet.Logger = zap.New(core).With(zap.String("otelcol.pipeline.id", "logs"))
	f := (&factory{clock: realClock{}}).processorFactory()
	p := processors{}
	var err error
	p.metrics, err = f.CreateMetrics(context.Background(), metricsSet, testConfig(0), consumertest.NewNop())
	require.NoError(t, err)
	p.logs, err = f.CreateLogs(context.Background(), logsSet, testConfig(0), consumertest.NewNop())
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, p.logs.Shutdown(context.Background()))
		require.NoError(t, p.metrics.Shutdown(context.Background()))
	})
	ctx := context.Background()
	warnings := func() []observer.LoggedEntry {
		return logs.FilterMessageSnippet("without host.name").AllUntimed()
	}

	// Both pipelines name the host: quiet.
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{host: "node-a", hwID: "GPU-a", at: t0, used: gib, total: 8 * gib})))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("node-a", t0, text("hello"))))
	assert.Empty(t, warnings())

	// The logs pipeline loses it: one warning naming that pipeline, however often.
	for range 3 {
		require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("", t0, text("hello"))))
	}
	require.Len(t, warnings(), 1)
	w := warnings()[0]
	assert.Equal(t, zapcore.WarnLevel, w.Level)
	assert.Equal(t, "logs", w.ContextMap()["otelcol.pipeline.id"])
	assert.Equal(t, "logs", w.ContextMap()["signal"])
	assert.Contains(t, w.ContextMap()["fix"], "resourcedetection")

	// A resource with an empty host.name counts as none; metrics warn on their own pipeline.
	md := metricsOf(gpuMetrics{host: "node-a", hwID: "GPU-a", at: t0, used: gib, total: 8 * gib},
		gpuMetrics{hwID: "GPU-b", at: t0, used: gib, total: 8 * gib})
	md.ResourceMetrics().At(1).Resource().Attributes().PutStr(resHostName, "")
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, md))
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, md))
	require.Len(t, warnings(), 2)
	assert.Equal(t, "metrics", warnings()[1].ContextMap()["otelcol.pipeline.id"])
}

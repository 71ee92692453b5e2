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

// hostNameSides is both sides of one id, each created with a logger that names its pipeline
// as the collector's does, and the warnings they log.
type hostNameSides struct {
	processors
	logs *observer.ObservedLogs
}

func newHostNameSides(t *testing.T) hostNameSides {
	t.Helper()
	core, logs := observer.New(zapcore.WarnLevel)
	metricsSet, logsSet := nopSettings(), nopSettings()
	metricsSet.Logger = zap.New(core).With(zap.String("otelcol.pipeline.id", "metrics"))
	logsSet.Logger = zap.New(core).With(zap.String("otelcol.pipeline.id", "logs"))
	f := (&factory{clock: realClock{}}).processorFactory()
	s := hostNameSides{logs: logs}
	var err error
	s.metrics, err = f.CreateMetrics(context.Background(), metricsSet, testConfig(0), consumertest.NewNop())
	require.NoError(t, err)
	s.processors.logs, err = f.CreateLogs(context.Background(), logsSet, testConfig(0), consumertest.NewNop())
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.processors.logs.Shutdown(context.Background()))
		require.NoError(t, s.metrics.Shutdown(context.Background()))
	})
	return s
}

func (s hostNameSides) send(t *testing.T, metricsHost, logsHost string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{host: metricsHost, hwID: "GPU-a", at: t0, used: gib, total: 8 * gib})))
	require.NoError(t, s.processors.logs.ConsumeLogs(ctx, logsWith(logsHost, t0, text("hello"))))
}

func (s hostNameSides) warnings() []observer.LoggedEntry {
	return s.logs.FilterMessageSnippet("without host.name").AllUntimed()
}

// Both sides name the host, or neither does (one host, nothing set anywhere): they meet, quiet.
func TestHostNameWarningQuietWhenSidesAgree(t *testing.T) {
	for _, host := range []string{"node-a", ""} {
		s := newHostNameSides(t)
		for range 3 {
			s.send(t, host, host)
		}
		assert.Empty(t, s.warnings(), "host.name %q on both", host)
	}
}

// The logs lose host.name while the metrics carry it: one warning in the logs pipeline's
// logger, however many batches follow.
func TestHostNameWarningOnLogsPipeline(t *testing.T) {
	s := newHostNameSides(t)
	for range 3 {
		s.send(t, "node-a", "")
	}
	require.Len(t, s.warnings(), 1)
	w := s.warnings()[0]
	assert.Equal(t, zapcore.WarnLevel, w.Level)
	assert.Equal(t, "logs", w.ContextMap()["otelcol.pipeline.id"], "the pipeline lacking it")
	assert.Equal(t, "logs", w.ContextMap()["signal"])
	assert.Contains(t, w.Message, "while the metrics carry it")
	assert.Contains(t, w.ContextMap()["fix"], "K8S_NODE_NAME")
}

// The metrics lack it (an empty value counts as none) before any record names a host: the
// warning comes when the first one does, in the metrics pipeline's logger.
func TestHostNameWarningOnMetricsPipelineLater(t *testing.T) {
	s := newHostNameSides(t)
	s.send(t, "", "")
	md := metricsOf(gpuMetrics{hwID: "GPU-b", at: t0, used: gib, total: 8 * gib})
	md.ResourceMetrics().At(0).Resource().Attributes().PutStr(resHostName, "")
	require.NoError(t, s.metrics.ConsumeMetrics(context.Background(), md))
	assert.Empty(t, s.warnings())
	require.NoError(t, s.processors.logs.ConsumeLogs(context.Background(), logsWith("node-a", t0, text("hello"))))
	require.Len(t, s.warnings(), 1)
	assert.Equal(t, "metrics", s.warnings()[0].ContextMap()["otelcol.pipeline.id"])
	// Logs without host.name were seen too, but the metrics never carried one: no second warning.
	s.send(t, "", "")
	assert.Len(t, s.warnings(), 1)
}

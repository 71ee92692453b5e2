package oomclassifier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestEvictionWarnedRateLimited: GPUs evicted past the window's bounds are a WARN the moment
// the first goes (the window is too small for the fleet: their OOMs will match nothing), with
// the count and the window's size, then at most once per logEvery, and every one is counted
// in the telemetry.
func TestEvictionWarnedRateLimited(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.InfoLevel)
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	clk := newFakeClock(t0)
	cfg := testConfig(0)
	cfg.MaxGPUs = 2
	p := newProcessorsClock(t, cfg, set, clk)
	gpu := func(i int) {
		require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
			host: "n", hwID: fmt.Sprintf("GPU-%d", i), at: t0, used: gib, total: 40 * gib})))
	}
	evictions := func() []observer.LoggedEntry {
		return logs.FilterMessageSnippet("least recently updated GPUs evicted").AllUntimed()
	}
	gpu(0)
	gpu(1)
	gpu(2)
	require.Len(t, evictions(), 1)
	e := evictions()[0]
	assert.Equal(t, zapcore.WarnLevel, e.Level)
	assert.Equal(t, int64(1), e.ContextMap()["count"])
	assert.Equal(t, int64(2), e.ContextMap()["window_gpus"])
	assert.Positive(t, e.ContextMap()["window_bytes"])
	gpu(3)
	gpu(4)
	assert.Len(t, evictions(), 1, "rate-limited")
	clk.Advance(logEvery)
	gpu(5)
	require.Len(t, evictions(), 2)
	assert.Equal(t, int64(3), evictions()[1].ContextMap()["count"], "every eviction since the last line")
	assert.Equal(t, int64(4), droppedBy(t, tel, "gpu_evicted"))
}

// TestMaxBytesBoundsTheWindow: the byte budget configured evicts as max_gpus does.
func TestMaxBytesBoundsTheWindow(t *testing.T) {
	cfg := testConfig(0)
	cfg.MaxBytes = minMaxBytes
	p := newProcessorsClock(t, cfg, nopSettings(), newFakeClock(t0.Add(time.Hour)))
	inst := p.logs.(*logsProcessor).inst
	for i := 0; i < 200; i++ {
		procs := make(map[int64]int64, 16)
		for j := 0; j < 16; j++ {
			procs[int64(1000+j)] = int64(j+1) * gib / 8
		}
		for s := 0; s < 60; s++ {
			require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
				host: "n", hwID: fmt.Sprintf("GPU-%d", i), at: t0.Add(time.Duration(s) * time.Second),
				used: 20 * gib, total: 40 * gib, procs: procs})))
		}
		require.LessOrEqual(t, inst.store.Bytes(), cfg.MaxBytes)
	}
	assert.Less(t, inst.store.Len(), 200)
}

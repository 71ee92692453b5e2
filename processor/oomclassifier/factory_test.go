package oomclassifier

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/goleak"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, "oom_classifier", f.Type().String())
	assert.Equal(t, component.StabilityLevelAlpha, f.LogsStability())
	assert.Equal(t, component.StabilityLevelAlpha, f.MetricsStability())
	_, err := f.CreateTraces(context.Background(), nopSettings(), f.CreateDefaultConfig(), consumertest.NewNop())
	assert.Error(t, err, "traces are not offered")
}

func TestLifecycle(t *testing.T) {
	for _, wait := range []int{0, 1} {
		cfg := testConfig(0)
		if wait == 1 {
			cfg = createDefaultConfig().(*Config)
		}
		f := NewFactory()
		mp, err := f.CreateMetrics(context.Background(), nopSettings(), cfg, consumertest.NewNop())
		require.NoError(t, err)
		lp, err := f.CreateLogs(context.Background(), nopSettings(), cfg, consumertest.NewNop())
		require.NoError(t, err)
		// Shutdown without Start, twice, then a late Start must not leak a worker.
		for range 2 {
			assert.NoError(t, lp.Shutdown(context.Background()))
			assert.NoError(t, mp.Shutdown(context.Background()))
		}
		assert.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
		assert.NoError(t, lp.Shutdown(context.Background()))
		// Start twice, Shutdown twice.
		lp, err = f.CreateLogs(context.Background(), nopSettings(), cfg, consumertest.NewNop())
		require.NoError(t, err)
		for range 2 {
			assert.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
		}
		for range 2 {
			assert.NoError(t, lp.Shutdown(context.Background()))
		}
	}
}

func TestVerifyShutdown(t *testing.T) {
	processortest.VerifyShutdown(t, NewFactory(), createDefaultConfig())
}

func TestSharedInstancePerID(t *testing.T) {
	f := &factory{}
	pf := f.processorFactory()
	cfg := createDefaultConfig()
	set := nopSettings()
	mp, err := pf.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lp, err := pf.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	other := processortest.NewNopSettings(metadata.Type)
	other.ID = component.NewIDWithName(metadata.Type, "other")
	lpOther, err := pf.CreateLogs(context.Background(), other, cfg, consumertest.NewNop())
	require.NoError(t, err)

	inst := lp.(*logsProcessor).inst
	ref, err := f.acquire(set, cfg)
	require.NoError(t, err)
	assert.Same(t, inst, ref.Value, "one instance per id")
	ref.Release()
	assert.NotSame(t, inst, lpOther.(*logsProcessor).inst, "another id has its own")

	// The metrics side feeds the very window the logs side reads.
	require.NoError(t, mp.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{hwID: "GPU-a", at: t0, used: 1, total: 2})))
	assert.Equal(t, 1, inst.store.Len())
	assert.Equal(t, 0, lpOther.(*logsProcessor).inst.store.Len())

	require.NoError(t, lp.Shutdown(context.Background()))
	require.NoError(t, lpOther.Shutdown(context.Background()))
	assert.Equal(t, 1, f.instances.Len(), "the metrics side still holds it")
	require.NoError(t, mp.Shutdown(context.Background()))
	assert.Equal(t, 0, f.instances.Len(), "released with its last user")
}

package gpumemreceiver

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// The simulated backend drives the very code the real one does; this checks the built-in
// scenario end to end through the receiver and that every attribute the code emits is one
// metadata.yaml declares.
func TestSimulatedBuiltinScenario(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = node.Simulated
	cfg.Xid.KmsgPath = ""
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	require.Equal(t, 12, md.ResourceMetrics().Len(), "8 simulated GPUs, GPU 7 split into 4 MIG instances")
	migs := map[string]string{} // "profile gi" → the process on it
	gpus := 0
	for id, attrs := range resources(md) {
		parent, isMIG := attrs["hw.parent"]
		if !isMIG {
			gpus++
			continue
		}
		assert.Regexp(t, `^MIG-`, id)
		assert.Equal(t, int64(7), attrs["nvidia.gpu.index"], "the parent's index")
		assert.Contains(t, resources(md), parent, "the parent is a resource too")
		key := fmt.Sprintf("%s %d", attrs["nvidia.gpu.mig.profile"], attrs["nvidia.gpu.mig.gpu_instance_id"])
		migs[key] = ""
		if p := byGPU(md)[id]["nvidia.gpu.process.memory.usage"]; len(p) > 0 {
			migs[key] = p[0].attrs["process.executable.name"].(string)
		}
	}
	assert.Equal(t, 8, gpus)
	assert.Equal(t, map[string]string{"3g.40gb 2": "tritonserver", "2g.20gb 3": "python3", "1g.10gb 9": "python3", "1g.10gb 10": ""}, migs)

	declared := loadMetadata(t)
	processes := 0
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		rm.Resource().Attributes().Range(func(k string, _ pcommon.Value) bool {
			assert.Contains(t, declared.ResourceAttributes, k)
			return true
		})
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			def, ok := declared.Metrics[m.Name()]
			require.True(t, ok, "metric %s declared", m.Name())
			forEachPoint(m, func(dp pmetric.NumberDataPoint) {
				dp.Attributes().Range(func(k string, _ pcommon.Value) bool {
					assert.Contains(t, def.Attributes, k, "attribute %s of %s declared", k, m.Name())
					return true
				})
			})
			if m.Name() == "nvidia.gpu.process.memory.usage" {
				processes += m.Sum().DataPoints().Len()
			}
		}
	}
	assert.GreaterOrEqual(t, processes, 24, "a few dozen processes")

	var zombie float64
	for _, g := range byGPU(md) {
		if v := g["nvidia.gpu.memory.unattributed"]; len(v) > 0 && v[0].value > zombie {
			zombie = v[0].value
		}
	}
	assert.InDelta(t, float64(6*gib), zombie, float64(gib), "one GPU holds ~6 GiB no process accounts for")
}

func forEachPoint(m pmetric.Metric, fn func(pmetric.NumberDataPoint)) {
	dps := pmetric.NewNumberDataPointSlice()
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	}
	for i := 0; i < dps.Len(); i++ {
		fn(dps.At(i))
	}
}

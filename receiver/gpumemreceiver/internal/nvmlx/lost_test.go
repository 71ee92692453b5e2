package nvmlx

import (
	"fmt"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestIsLost(t *testing.T) {
	assert.True(t, IsLost(nvml.ERROR_GPU_IS_LOST))
	assert.True(t, IsLost(fmt.Errorf("read memory info of GPU x: %w", nvml.ERROR_GPU_IS_LOST)))
	assert.False(t, IsLost(nvml.ERROR_UNKNOWN))
	assert.False(t, IsLost(nil))
}

// MarkLost marks a MIG instance's GPU, warns once, and a re-enumeration after
// rediscoverEvery clears it once the GPU answers, with one INFO line.
func TestMarkLostAndRediscover(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	s := NewSession(fakeLib(1), "libnvidia-ml.so.1", zap.New(core))
	s.Start(nil)
	t.Cleanup(s.Shutdown)
	var gpu *Device
	require.NoError(t, s.WithDevices(func(_ string, ds []*Device) { gpu = ds[0] }))
	inst := &Device{UUID: "MIG-1111", Parent: gpu}

	inst.MarkLost("GPU_IS_LOST", s.logger)
	gpu.MarkLost("Xid 79 (kmsg)", s.logger)
	assert.True(t, gpu.Lost())
	assert.False(t, inst.Lost(), "the GPU is lost, not the instance's own flag")
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1, "one warning per lost GPU")
	assert.Equal(t, gpu.UUID, warns[0].ContextMap()["gpu"])
	assert.Equal(t, "GPU_IS_LOST", warns[0].ContextMap()["reason"])

	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.MaybeRediscover(now) // the first call only starts the clock
	s.MaybeRediscover(now.Add(s.rediscoverEvery - time.Second))
	assert.True(t, gpu.Lost(), "not before rediscoverEvery")
	s.MaybeRediscover(now.Add(s.rediscoverEvery))
	assert.False(t, gpu.Lost())
	assert.Len(t, logs.FilterMessage("GPU is back: querying it again").All(), 1)
}

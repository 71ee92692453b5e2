package simnvml

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPersistenceAndComputeMode(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, `
gpus:
  - {}
  - persistence_mode: false
    compute_mode: prohibited
  - supports: {persistence_mode: false, compute_mode: false}
`), Options{})
	mode, r := deviceAt(t, sim, 0).GetPersistenceMode()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, nvml.FEATURE_ENABLED, mode, "on by default")
	cm, r := deviceAt(t, sim, 0).GetComputeMode()
	require.Equal(t, nvml.SUCCESS, r)
	assert.Equal(t, nvml.COMPUTEMODE_DEFAULT, cm)

	mode, _ = sim.DeviceGetPersistenceMode(deviceAt(t, sim, 1))
	assert.Equal(t, nvml.FEATURE_DISABLED, mode)
	cm, _ = sim.DeviceGetComputeMode(deviceAt(t, sim, 1))
	assert.Equal(t, nvml.COMPUTEMODE_PROHIBITED, cm)

	_, r = deviceAt(t, sim, 2).GetPersistenceMode()
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, r)
	_, r = deviceAt(t, sim, 2).GetComputeMode()
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, r)

	_, err := ParseScenario([]byte("gpus: [{compute_mode: exclusive_thread}]"), t.TempDir())
	assert.ErrorContains(t, err, "gpus[0].compute_mode")
}

// Samples as NVML gives them: only busy live processes, stamped now, nothing new since
// lastSeen is NOT_FOUND, NOT_SUPPORTED in MIG mode.
func TestProcessUtilization(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, `
duration: 1m
gpus:
  - processes:
      - {pid: 10, name: busy, memory: 1GiB, sm_utilization: 80, memory_utilization: 30}
      - {pid: 11, name: idle, memory: 1GiB}
      - {pid: 12, name: late, memory: 1GiB, sm_utilization: 5, start: 10s}
  - supports: {process_utilization: false}
`), Options{})
	d := deviceAt(t, sim, 0)
	samples, r := d.GetProcessUtilization(0)
	require.Equal(t, nvml.SUCCESS, r)
	stamp := uint64(epoch.UnixMicro())
	assert.Equal(t, []nvml.ProcessUtilizationSample{{Pid: 10, TimeStamp: stamp, SmUtil: 80, MemUtil: 30}}, samples)

	_, r = d.GetProcessUtilization(stamp)
	assert.Equal(t, nvml.ERROR_NOT_FOUND, r, "nothing newer than the last read")

	clk.Set(15 * time.Second)
	samples, r = sim.DeviceGetProcessUtilization(d, stamp)
	require.Equal(t, nvml.SUCCESS, r)
	assert.Len(t, samples, 2)

	_, r = deviceAt(t, sim, 1).GetProcessUtilization(0)
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, r)
}

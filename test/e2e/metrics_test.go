//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// TestSimulatedMetrics runs the distribution on the built-in scenario and checks what a user's
// backend would receive: 8 GPUs, one of them split into 4 MIG instances, each a resource with
// the attributes and metrics of docs/metrics.md.
func TestSimulatedMetrics(t *testing.T) {
	c := startCollector(t, renderConfig(t, "metrics.yaml.tmpl", nil))
	path := filepath.Join(c.dir, "metrics.jsonl")
	e2eharness.WaitFor(t, 30*time.Second, c, "three scrapes in the file exporter's output", func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 0 && len(e2eharness.ReadMetrics(t, path)) >= 3
	})
	c.stop(t)

	gpus := map[string]map[string]any{}
	names := map[string]bool{}
	processPoints := 0
	for _, md := range e2eharness.ReadMetrics(t, path) {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			attrs := rm.Resource().Attributes().AsRaw()
			gpus[attrs["hw.id"].(string)] = attrs
			ms := rm.ScopeMetrics().At(0).Metrics()
			for j := 0; j < ms.Len(); j++ {
				m := ms.At(j)
				names[m.Name()] = true
				if m.Name() == "nvidia.gpu.process.memory.usage" {
					for k := 0; k < m.Sum().DataPoints().Len(); k++ {
						dp := m.Sum().DataPoints().At(k)
						processPoints++
						a := dp.Attributes().AsRaw()
						assert.Contains(t, a, "process.pid")
						assert.Contains(t, a, "process.executable.name")
						assert.Contains(t, a, "nvidia.gpu.process.type")
						if _, inContainer := a["container.id"]; inContainer {
							assert.Contains(t, a, "process.vpid", "a containerised process has its own pid namespace")
						}
						if vpid, ok := a["process.vpid"]; ok {
							assert.NotEqual(t, a["process.pid"], vpid, "vpid only where it differs from the host pid")
						}
						assert.Positive(t, dp.IntValue())
					}
				}
			}
		}
	}
	assert.Len(t, gpus, 12, "one resource per simulated GPU and per MIG instance")
	parents := map[string]int{}
	for id, attrs := range gpus {
		assert.Equal(t, "gpu", attrs["hw.type"])
		assert.Equal(t, "nvidia", attrs["hw.vendor"])
		assert.NotEmpty(t, attrs["hw.driver_version"])
		assert.Regexp(t, `^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-9A-F]$`, attrs["nvidia.gpu.pci.bus_id"])
		assert.Contains(t, attrs, "nvidia.gpu.index")
		parent, isMIG := attrs["hw.parent"]
		if !isMIG {
			assert.Regexp(t, `^GPU-`, id)
			assert.Equal(t, "NVIDIA H100 80GB HBM3", attrs["hw.model"])
			assert.Equal(t, fmt.Sprintf("GPU %d", attrs["nvidia.gpu.index"]), attrs["hw.name"])
			assert.Equal(t, "96.00.89.00.01", attrs["hw.firmware_version"], "the simulator's VBIOS version")
			continue
		}
		// The built-in scenario splits GPU 7 into MIG instances.
		parents[parent.(string)]++
		assert.Regexp(t, `^MIG-`, id)
		assert.Contains(t, gpus, parent, "a MIG instance's parent GPU is a resource too")
		assert.Regexp(t, `^[1-7]g\.[0-9]+gb$`, attrs["nvidia.gpu.mig.profile"])
		assert.Equal(t, "NVIDIA H100 80GB HBM3 MIG "+attrs["nvidia.gpu.mig.profile"].(string), attrs["hw.model"])
		assert.Equal(t, fmt.Sprintf("GPU %d MIG %d/%d", attrs["nvidia.gpu.index"], attrs["nvidia.gpu.mig.gpu_instance_id"],
			attrs["nvidia.gpu.mig.compute_instance_id"]), attrs["hw.name"])
		assert.Contains(t, attrs, "nvidia.gpu.mig.gpu_instance_id")
		assert.Contains(t, attrs, "nvidia.gpu.mig.compute_instance_id")
	}
	assert.Len(t, parents, 1, "one GPU in MIG mode")
	for _, n := range parents {
		assert.Equal(t, 4, n, "split into 4 instances")
	}
	for _, name := range []string{
		"hw.gpu.memory.usage", "hw.gpu.memory.limit", "hw.gpu.memory.utilization",
		"nvidia.gpu.memory.free", "nvidia.gpu.memory.reserved", "nvidia.gpu.memory.unattributed",
		"nvidia.gpu.process.memory.usage", "nvidia.gpu.process.count", "hw.gpu.utilization",
		"nvidia.gpu.process.utilization", "nvidia.gpu.persistence_mode", "nvidia.gpu.compute_mode",
	} {
		assert.True(t, names[name], "metric %s exported", name)
	}
	assert.Greater(t, processPoints, 24, "per-process points across the scrapes")
}

package gpumemreceiver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// TestOnlyRatiosHaveUnitOne: Prometheus' OTLP translation appends _ratio to every gauge of
// unit "1". That reads right for a fraction (hw_gpu_utilization_ratio) and wrong for a 0/1
// state flag (nvidia_gpu_ecc_mode_ratio), so a unit-"1" gauge must be a fraction of
// something: its name says utilization.
func TestOnlyRatiosHaveUnitOne(t *testing.T) {
	for _, m := range metadata.Metrics {
		if m.Type != metadata.Gauge || m.Unit != "1" {
			continue
		}
		assert.True(t, strings.HasSuffix(m.Name, ".utilization"),
			"%s is a gauge of unit 1 but not a fraction: Prometheus would call it %s_ratio", m.Name, strings.ReplaceAll(m.Name, ".", "_"))
	}
}

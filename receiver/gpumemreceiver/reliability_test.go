package gpumemreceiver

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReliabilityMetrics(t *testing.T) {
	volta := newFakeGPU(0) // page retirement, no row remapping
	volta.retired = map[nvml.PageRetirementCause]int{
		nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS: 3,
		nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR:           1,
	}
	volta.retiredPending = true
	volta.ecc = &[2]uint64{12, 1}
	hopper := newFakeGPU(1) // row remapping, no page retirement
	hopper.remap = &[4]int{2, 1, 0, 1}
	hopper.ecc = &[2]uint64{0, 0}
	consumer := newFakeGPU(2) // none of it
	lib := newFakeNVML(volta, hopper, consumer)
	r := startWith(t, lib, fstest.MapFS{})

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	got := byGPU(md)

	v := got[volta.uuid]
	require.Len(t, v["nvidia.gpu.memory.retired_pages"], 2)
	assert.Equal(t, 3.0, v["nvidia.gpu.memory.retired_pages"][0].value)
	assert.Equal(t, "single_bit_ecc", v["nvidia.gpu.memory.retired_pages"][0].attrs["nvidia.gpu.retirement.cause"])
	assert.Equal(t, 1.0, v["nvidia.gpu.memory.retired_pages"][1].value)
	assert.Equal(t, 1.0, v["nvidia.gpu.memory.retired_pages.pending"][0].value)
	assert.NotContains(t, v, "nvidia.gpu.memory.remapped_rows")
	assert.Equal(t, 1.0, v["nvidia.gpu.ecc.mode"][0].value)
	require.Len(t, v["hw.errors"], 2)
	assert.Equal(t, map[string]any{"hw.type": "gpu", "error.type": "corrected"}, v["hw.errors"][0].attrs)
	assert.Equal(t, 12.0, v["hw.errors"][0].value)

	h := got[hopper.uuid]
	assert.NotContains(t, h, "nvidia.gpu.memory.retired_pages")
	require.Len(t, h["nvidia.gpu.memory.remapped_rows"], 2)
	assert.Equal(t, "uncorrectable", h["nvidia.gpu.memory.remapped_rows"][1].attrs["nvidia.gpu.remap.type"])
	assert.Equal(t, 0.0, h["nvidia.gpu.memory.remapped_rows.pending"][0].value)
	assert.Equal(t, 1.0, h["nvidia.gpu.memory.remapped_rows.failed"][0].value)

	c := got[consumer.uuid]
	for _, name := range []string{"nvidia.gpu.memory.retired_pages", "nvidia.gpu.memory.remapped_rows", "nvidia.gpu.ecc.mode", "hw.errors"} {
		assert.NotContains(t, c, name)
	}

	// Probed once: a second scrape does not ask the consumer part again.
	_, err = r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	assert.Len(t, lib.devices[2].GetRemappedRowsCalls(), 1)
	assert.Len(t, lib.devices[2].GetRetiredPagesCalls(), 1)
	assert.Len(t, lib.devices[2].GetTotalEccErrorsCalls(), 1)
}

// Volatile ECC counters are cumulative from the first scrape; a reset (driver reload) starts
// a new series start time.
func TestECCCounterStartTime(t *testing.T) {
	g := newFakeGPU(0)
	g.ecc = &[2]uint64{5, 0}
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	start := func() int64 {
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
		for i := 0; i < ms.Len(); i++ {
			if ms.At(i).Name() == "hw.errors" {
				return int64(ms.At(i).Sum().DataPoints().At(0).StartTimestamp())
			}
		}
		t.Fatal("no hw.errors")
		return 0
	}
	first := start()
	g.ecc[0] = 7
	assert.Equal(t, first, start(), "growing counter keeps its start")
	g.ecc[0] = 1
	assert.Greater(t, start(), first, "a counter that went down was reset")
}

func TestECCErrorIsPartial(t *testing.T) {
	g := newFakeGPU(0)
	g.ecc = &[2]uint64{0, 0}
	g.eccErr = nvml.ERROR_UNKNOWN
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	md, err := r.scrapeMetrics(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read volatile ECC errors of GPU "+g.uuid)
	assert.Contains(t, byGPU(md)[g.uuid], "hw.gpu.memory.usage")
}

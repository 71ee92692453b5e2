package gpumemreceiver

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

func TestPersistenceAndComputeMode(t *testing.T) {
	on, off := true, false
	exclusive, prohibited := nvml.COMPUTEMODE_EXCLUSIVE_PROCESS, nvml.COMPUTEMODE_PROHIBITED
	a, b, none := newFakeGPU(0), newFakeGPU(1), newFakeGPU(2)
	a.persistence, a.computeMode = &on, &exclusive
	b.persistence, b.computeMode = &off, &prohibited
	r := startWith(t, newFakeNVML(a, b, none), fstest.MapFS{})

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	got := byGPU(md)
	modes := func(uuid string) map[string]float64 {
		out := map[string]float64{}
		for _, p := range got[uuid]["nvidia.gpu.compute_mode"] {
			out[p.attrs["nvidia.gpu.compute_mode"].(string)] = p.value
		}
		return out
	}
	require.Len(t, got[a.uuid]["nvidia.gpu.persistence_mode"], 1)
	assert.Equal(t, 1.0, got[a.uuid]["nvidia.gpu.persistence_mode"][0].value)
	assert.Equal(t, 0.0, got[b.uuid]["nvidia.gpu.persistence_mode"][0].value)
	assert.Equal(t, map[string]float64{"default": 0, "exclusive_process": 1, "prohibited": 0}, modes(a.uuid))
	assert.Equal(t, map[string]float64{"default": 0, "exclusive_process": 0, "prohibited": 1}, modes(b.uuid))
	assert.NotContains(t, got[none.uuid], "nvidia.gpu.persistence_mode", "NOT_SUPPORTED: quietly absent")
	assert.NotContains(t, got[none.uuid], "nvidia.gpu.compute_mode")
}

// The two calls are independent: each failure costs its own metric and names its call.
func TestModesErrors(t *testing.T) {
	on, def := true, nvml.COMPUTEMODE_DEFAULT
	g := newFakeGPU(0)
	g.persistence, g.computeMode, g.modeErr = &on, &def, nvml.ERROR_UNKNOWN
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	_, err := r.scrapeMetrics(context.Background())
	var pe scrapererror.PartialScrapeError
	require.True(t, errors.As(err, &pe), "want a partial scrape error, got %v", err)
	assert.Equal(t, 2, pe.Failed)
	assert.ErrorContains(t, err, "read persistence mode of GPU "+g.uuid)
	assert.ErrorContains(t, err, "read compute mode of GPU "+g.uuid)
}

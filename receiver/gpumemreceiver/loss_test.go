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

// TestScrapeLossCounts checks that each failing call costs the metrics its recorder names,
// summed over devices, and that the scrape goes on for the rest.
func TestScrapeLossCounts(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(g *fakeGPU)
		lost    int
		call    string
	}{
		{"memory", func(g *fakeGPU) { g.memV2, g.memV1 = nvml.ERROR_UNKNOWN, nvml.ERROR_UNKNOWN }, memoryMetricsLen, "read memory info v2"},
		{"processes", func(g *fakeGPU) { g.processes = nvml.ERROR_UNKNOWN }, processMetricsLen, "list compute processes"},
		{"ecc counters", func(g *fakeGPU) { g.ecc, g.eccErr = &[2]uint64{}, nvml.ERROR_UNKNOWN }, 1, "read volatile ECC errors"},
		{"utilization", func(g *fakeGPU) { g.utilization = nvml.ERROR_UNKNOWN }, 1, "read utilization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newFakeGPU(0), newFakeGPU(1)
			tt.breakIt(a)
			tt.breakIt(b)
			r := startWith(t, newFakeNVML(a, b), fstest.MapFS{})
			md, err := r.scrapeMetrics(context.Background())
			var pe scrapererror.PartialScrapeError
			require.True(t, errors.As(err, &pe), "want a partial scrape error, got %v", err)
			assert.Equal(t, 2*tt.lost, pe.Failed, "metrics lost on two GPUs")
			assert.ErrorContains(t, err, tt.call)
			assert.Equal(t, 2, md.ResourceMetrics().Len(), "both GPUs keep their other metrics")
		})
	}
}

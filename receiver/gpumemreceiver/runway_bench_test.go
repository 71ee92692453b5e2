package gpumemreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// BenchmarkScrapeRunway is BenchmarkScrape's 8 GPUs × 16 processes at 1 s scrapes on an
// injected clock, with the runway off, on with flat memory (the common case), and on with
// every GPU and process leaking (the worst case: 136 full 10-minute fits per scrape).
func BenchmarkScrapeRunway(b *testing.B) {
	for _, bc := range []struct {
		name    string
		enabled bool
		growing bool
	}{{"off", false, false}, {"flat", true, false}, {"growing", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			gpus, tree := benchNode()
			cfg := createDefaultConfig().(*Config)
			cfg.Xid = XidConfig{}
			cfg.Runway.Enabled = bc.enabled
			r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
			clk := newFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			r.now = clk.Now
			r.newBackend = func(*Config) (node.Node, error) {
				return node.Node{Lib: newFakeNVML(gpus...), ProcFS: procTree(tree)}, nil
			}
			require.NoError(b, r.Start(context.Background(), componenttest.NewNopHost()))
			b.Cleanup(func() { require.NoError(b, r.Shutdown(context.Background())) })
			sec := 0
			step := func() {
				sec++
				clk.Set(clk.Now().Add(time.Second))
				if !bc.growing {
					return
				}
				for _, g := range gpus {
					for p := range g.compute {
						g.compute[p].UsedGpuMemory = uint64(gib + int64(sec%3000)*mib)
					}
					g.used = 16 * int64(g.compute[0].UsedGpuMemory)
				}
			}
			ctx := context.Background()
			for range 700 { // fill the 10-minute window first
				step()
				_, err := r.scrapeMetrics(ctx)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				step()
				if _, err := r.scrapeMetrics(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package window

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKeptPeakEqualsDecodedPeak: through random values, late and duplicate points, the
// per-series cap and trims, the kept peak answers every range as decoding the series does.
func TestKeptPeakEqualsDecodedPeak(t *testing.T) {
	cfg := testConfig()
	cfg.Window, cfg.MaxSamplesPerGPU = time.Minute, 50
	s := New(cfg)
	r := rand.New(rand.NewPCG(7, 8))
	k := GPUKey{Host: "h", HWID: "GPU-a"}
	for i := 0; i < 400; i++ {
		at := i
		if r.IntN(5) == 0 {
			at -= r.IntN(4) // late, or a duplicate of a recent second
		}
		s.Observe(k, GPUInfo{Index: 0}, []Sample{{Kind: ProcessBytes, T: sec(at), V: int64(r.IntN(10)) * gib, Process: ProcessInfo{PID: 1}}})
		p := s.hosts["h"].gpus["GPU-a"].procs[1]
		for _, rg := range [][2]int64{{sec(i - 30), sec(i)}, {sec(i - 90), sec(i + 1)}, {sec(i - 10), sec(i - 5)}} {
			want, wok := p.s.maxBetween(rg[0], rg[1])
			got, gok := p.peak.between(&p.s, rg[0], rg[1])
			require.Equal(t, wok, gok, "at %d, range %v", i, rg)
			require.Equal(t, want.V, got.V, "at %d, range %v", i, rg)
		}
	}
}

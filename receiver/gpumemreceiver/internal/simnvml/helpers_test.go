package simnvml

import (
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a clock tests step by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newFakeClock() *fakeClock { return &fakeClock{t: epoch} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to scenario-relative elapsed time d.
func (c *fakeClock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = epoch.Add(d)
}

// newTestSim starts a simulator on a fake clock at elapsed 0, initialized.
func newTestSim(t testing.TB, s *Scenario, opts Options) (*Sim, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	opts.Now = clk.Now
	opts.Start = epoch
	sim, err := New(s, opts)
	require.NoError(t, err)
	require.Equal(t, nvml.SUCCESS, sim.Init())
	return sim, clk
}

// parse parses scenario YAML from a test.
func parse(t testing.TB, y string) *Scenario {
	t.Helper()
	s, err := ParseScenario([]byte(y), t.TempDir())
	require.NoError(t, err)
	return s
}

func deviceAt(t testing.TB, s *Sim, i int) nvml.Device {
	t.Helper()
	d, ret := s.DeviceGetHandleByIndex(i)
	require.Equal(t, nvml.SUCCESS, ret)
	return d
}

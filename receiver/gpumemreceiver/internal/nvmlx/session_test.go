package nvmlx

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// The NVML init retry doubles its wait after each failure up to RetryMax, and stays there.
// The waits are read from the debug line each retry logs (next_try), so the test does not
// depend on how long the sleeps really took.
func TestInitRetryBackoffGrowsAndIsCapped(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	var mu sync.Mutex
	inits := 0
	lib := fakeLib(1)
	lib.InitFunc = func() nvml.Return {
		mu.Lock()
		defer mu.Unlock()
		inits++
		if inits <= 8 {
			return nvml.ERROR_DRIVER_NOT_LOADED
		}
		return nvml.SUCCESS
	}
	s := NewSession(lib, "libnvidia-ml.so.1", zap.New(core))
	s.RetryMin, s.RetryMax = time.Millisecond, 8*time.Millisecond
	s.Start(nil)
	t.Cleanup(s.Shutdown)
	require.Eventually(t, s.IsUp, 10*time.Second, time.Millisecond)

	var waits []time.Duration
	for _, e := range logs.FilterMessage("NVML still unavailable").All() {
		waits = append(waits, e.ContextMap()["next_try"].(time.Duration))
	}
	require.Len(t, waits, 7, "1 failure at start, 7 retries that fail, then success")
	assert.Contains(t, []time.Duration{s.RetryMin, 2 * s.RetryMin}, waits[0], "starts at RetryMin (the wait just taken or the next one)")
	for i := 1; i < len(waits); i++ {
		assert.Equal(t, min(2*waits[i-1], s.RetryMax), waits[i], "wait %d doubles up to RetryMax: %v", i, waits)
	}
	assert.Equal(t, s.RetryMax, waits[len(waits)-1], "capped: %v", waits)
}

// Before Start and after Shutdown the gate is closed: WithDevices answers ErrDown and does
// not run fn. Shutdown is safe twice.
func TestSessionGate(t *testing.T) {
	s := NewSession(fakeLib(2), "libnvidia-ml.so.1", zap.NewNop())
	ran := false
	require.ErrorIs(t, s.WithDevices(func(string, []*Device) { ran = true }), ErrDown)
	assert.False(t, ran)

	s.Start(nil)
	require.True(t, s.IsUp())
	require.NoError(t, s.WithDevices(func(driver string, ds []*Device) {
		ran = true
		assert.Equal(t, "570.86.15", driver)
		require.Len(t, ds, 2)
		assert.Equal(t, "GPU-00000001-aaaa-bbbb-cccc-dddddddddddd", ds[1].UUID)
		assert.Equal(t, "00000000:19:00.0", ds[1].BusID)
		assert.Equal(t, 1, ds[1].Index)
	}))
	assert.True(t, ran)

	s.Shutdown()
	s.Shutdown()
	assert.False(t, s.IsUp())
	require.ErrorIs(t, s.WithDevices(func(string, []*Device) {}), ErrDown)
}

// While Verify fails the library is never initialised: one error naming what it lacks, a
// recoverable status, and the usual retry, which starts the session once Verify passes.
func TestVerifyFailureNeverInitialises(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	var mu sync.Mutex
	verifies, inits := 0, 0
	lib := fakeLib(1)
	lib.InitFunc = func() nvml.Return {
		mu.Lock()
		defer mu.Unlock()
		inits++
		return nvml.SUCCESS
	}
	s := NewSession(lib, "/lib/x86_64-linux-gnu/libz.so.1", zap.New(core))
	s.RetryMin, s.RetryMax = time.Millisecond, 4*time.Millisecond
	s.Verify = func() error {
		mu.Lock()
		defer mu.Unlock()
		verifies++
		if verifies <= 4 {
			return &NotNVMLError{Path: "/lib/x86_64-linux-gnu/libz.so.1", Missing: []string{"nvmlInit_v2", "nvmlShutdown"}}
		}
		return nil
	}
	host := &statusRecorder{}
	s.Start(reportTo(host))
	t.Cleanup(s.Shutdown)
	require.Eventually(t, s.IsUp, 10*time.Second, time.Millisecond)

	mu.Lock()
	assert.Equal(t, 5, verifies)
	assert.Equal(t, 1, inits, "Init only once Verify passed")
	mu.Unlock()
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, errs, 1)
	assert.Equal(t, []any{"nvmlInit_v2", "nvmlShutdown"}, errs[0].ContextMap()["missing_symbols"])
	assert.Equal(t, "/lib/x86_64-linux-gnu/libz.so.1 is not the NVIDIA driver's NVML library: it lacks nvmlInit_v2, nvmlShutdown; the receiver does not call into it",
		errs[0].ContextMap()["error"])
	assert.Zero(t, logs.FilterLevelExact(zapcore.WarnLevel).Len(), "not also the missing-driver warning")
	assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}, host.statuses())
}

// statusRecorder is a host that records the reported statuses.
type statusRecorder struct {
	component.Host
	mu     sync.Mutex
	events []componentstatus.Status
}

func (h *statusRecorder) Report(e *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e.Status())
}

func (h *statusRecorder) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]componentstatus.Status(nil), h.events...)
}

// A condition Degraded reports (a PID namespace that hides processes) stands after NVML comes
// up, at the first try and after a retry: the recoverable error replaces StatusOK, and
// Degraded sees the driver version.
func TestDegradedOutlivesInit(t *testing.T) {
	for _, failFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("retry=%t", failFirst), func(t *testing.T) {
			var mu sync.Mutex
			inits := 0
			lib := fakeLib(1)
			lib.InitFunc = func() nvml.Return {
				mu.Lock()
				defer mu.Unlock()
				inits++
				if failFirst && inits == 1 {
					return nvml.ERROR_DRIVER_NOT_LOADED
				}
				return nvml.SUCCESS
			}
			s := NewSession(lib, "libnvidia-ml.so.1", zap.NewNop())
			s.RetryMin = time.Millisecond
			var seen []string
			s.Degraded = func(driver string) error {
				seen = append(seen, driver)
				return errors.New("processes hidden")
			}
			host := &statusRecorder{}
			s.Start(reportTo(host))
			t.Cleanup(s.Shutdown)
			require.Eventually(t, func() bool { return len(host.statuses()) == map[bool]int{false: 1, true: 2}[failFirst] }, 10*time.Second, time.Millisecond)
			s.Shutdown()
			want := []componentstatus.Status{componentstatus.StatusRecoverableError}
			if failFirst {
				want = append(want, componentstatus.StatusRecoverableError)
			}
			assert.Equal(t, want, host.statuses(), "never StatusOK")
			assert.Equal(t, []string{"570.86.15"}, seen)
		})
	}
}

// reportTo sends a session's reports to host's status, as the receiver does.
func reportTo(host component.Host) Report {
	return func(err error) {
		if err != nil {
			componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
			return
		}
		componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
}

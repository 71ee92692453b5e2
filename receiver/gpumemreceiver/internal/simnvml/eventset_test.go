package simnvml

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const eventScenario = `
duration: 60s
gpus: [{}, {}, {}]
events:
  - {at: 20s, gpu: 2, xid: 31, pid: 1234, name: python3}
  - {at: 25s, gpu: 1, xid: 79}
  - {at: 30s, gpu: 2, xid: 63, via: kmsg}
  - {at: 40s, gpu: 2, xid: 13, via: nvml}
`

func newRegisteredSet(t *testing.T, sim *Sim, gpus ...int) nvml.EventSet {
	t.Helper()
	set, ret := sim.EventSetCreate()
	require.Equal(t, nvml.SUCCESS, ret)
	t.Cleanup(func() { set.Free() })
	for _, g := range gpus {
		d := deviceAt(t, sim, g)
		types, ret := d.GetSupportedEventTypes()
		require.Equal(t, nvml.SUCCESS, ret)
		require.NotZero(t, types&nvml.EventTypeXidCriticalError)
		require.Equal(t, nvml.SUCCESS, d.RegisterEvents(nvml.EventTypeXidCriticalError, set))
	}
	return set
}

func TestEventSetDeliversXids(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, eventScenario), Options{})
	set := newRegisteredSet(t, sim, 1, 2)

	clk.Set(19 * time.Second)
	_, ret := set.Wait(10)
	assert.Equal(t, nvml.ERROR_TIMEOUT, ret, "nothing due yet")

	clk.Set(45 * time.Second)
	var got []uint64
	for {
		e, ret := set.Wait(0)
		if ret == nvml.ERROR_TIMEOUT {
			break
		}
		require.Equal(t, nvml.SUCCESS, ret)
		assert.Equal(t, uint64(nvml.EventTypeXidCriticalError), e.EventType)
		got = append(got, e.EventData)
		if e.EventData == 31 {
			assert.Same(t, deviceAt(t, sim, 2), e.Device)
			assert.Equal(t, uint32(noInstance), e.GpuInstanceId)
		}
	}
	assert.Equal(t, []uint64{31, 79, 13}, got, "kmsg-only Xid 63 is not an NVML event")

	// Next loop: the same events again, once each.
	clk.Set(60*time.Second + 21*time.Second)
	e, ret := set.Wait(0)
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, uint64(31), e.EventData)
	_, ret = set.Wait(0)
	assert.Equal(t, nvml.ERROR_TIMEOUT, ret)
}

func TestEventSetOnlyRegisteredDevices(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, eventScenario), Options{})
	set := newRegisteredSet(t, sim, 1)
	clk.Set(59 * time.Second)
	e, ret := set.Wait(0)
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, uint64(79), e.EventData)
	_, ret = set.Wait(0)
	assert.Equal(t, nvml.ERROR_TIMEOUT, ret)
}

func TestEventSetSeesOnlyLaterEvents(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, eventScenario), Options{})
	clk.Set(22 * time.Second)
	set := newRegisteredSet(t, sim, 0, 1, 2)
	clk.Set(26 * time.Second)
	e, ret := set.Wait(0)
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, uint64(79), e.EventData, "Xid 31 came before the set existed")
}

func TestEventSetWaitBlocksUntilTimeout(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, eventScenario), Options{})
	set := newRegisteredSet(t, sim, 2)
	start := time.Now()
	_, ret := set.Wait(50)
	assert.Equal(t, nvml.ERROR_TIMEOUT, ret)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
}

func TestEventSetWaitWakesForEvent(t *testing.T) {
	// Wall clock: the event 100 ms from now arrives within a 5 s wait.
	s := parse(t, "gpus: [{}]\nevents: [{at: 100ms, gpu: 0, xid: 48}]")
	sim, err := New(s, Options{})
	require.NoError(t, err)
	require.Equal(t, nvml.SUCCESS, sim.Init())
	set := newRegisteredSet(t, sim, 0)
	start := time.Now()
	e, ret := set.Wait(5000)
	require.Equal(t, nvml.SUCCESS, ret)
	assert.Equal(t, uint64(48), e.EventData)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestEventSetFreeEndsWait(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, eventScenario), Options{})
	set, _ := sim.EventSetCreate()
	done := make(chan nvml.Return)
	go func() {
		_, ret := set.Wait(60_000)
		done <- ret
	}()
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, nvml.SUCCESS, sim.EventSetFree(set))
	select {
	case ret := <-done:
		assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, ret)
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after Free")
	}
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, set.Free(), "double free is refused, not a crash")
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, deviceAt(t, sim, 0).RegisterEvents(nvml.EventTypeXidCriticalError, set))
}

func TestRegisterEventsRefusals(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, "gpus: [{}, {supports: {events: false}}]"), Options{})
	set := newRegisteredSet(t, sim)
	d0 := deviceAt(t, sim, 0)
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, d0.RegisterEvents(nvml.EventTypeAll, set), "unsupported types")
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, d0.RegisterEvents(nvml.EventTypeXidCriticalError, nil))
	assert.Equal(t, nvml.ERROR_NOT_SUPPORTED, deviceAt(t, sim, 1).RegisterEvents(nvml.EventTypeXidCriticalError, set))

	other, _ := newTestSim(t, parse(t, "gpus: [{}]"), Options{})
	foreign := newRegisteredSet(t, other)
	assert.Equal(t, nvml.ERROR_INVALID_ARGUMENT, d0.RegisterEvents(nvml.EventTypeXidCriticalError, foreign))
}

func TestEventSetCatchUpIsBounded(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, eventScenario), Options{})
	set := newRegisteredSet(t, sim, 1, 2)
	clk.Set(1000 * time.Hour) // a jump of 60 000 loops replays at most one
	n := 0
	for {
		if _, ret := set.Wait(0); ret != nvml.SUCCESS {
			break
		}
		n++
	}
	assert.LessOrEqual(t, n, 4)
}

func TestTimeline(t *testing.T) {
	tl := timeline{ats: []time.Duration{2 * time.Second, 5 * time.Second}, loop: 10 * time.Second}
	at, ok := tl.at(3)
	assert.True(t, ok)
	assert.Equal(t, 15*time.Second, at)
	assert.Equal(t, int64(2), tl.firstFrom(6*time.Second))
	assert.Equal(t, int64(2), tl.firstFrom(12*time.Second))
	assert.Equal(t, int64(3), tl.firstFrom(13*time.Second))

	once := timeline{ats: []time.Duration{time.Second}}
	_, ok = once.at(1)
	assert.False(t, ok, "without a loop each item occurs once")
	_, ok = timeline{}.at(0)
	assert.False(t, ok)
}

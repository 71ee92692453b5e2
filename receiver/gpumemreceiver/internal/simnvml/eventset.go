package simnvml

import (
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// eventSet delivers the scenario's Xid events (via both or nvml) of the
// devices registered on it, each once, at its time, as nvmlEventSetWait does.
type eventSet struct {
	*mock.EventSet
	sim *Sim
	tl  timeline

	mu    sync.Mutex
	masks [maxGPUs]uint64 // registered event types per GPU index
	next  int64           // next occurrence to consider
	freed bool
	done  chan struct{} // closed by Free, ends a blocked Wait
}

var _ nvml.EventSet = (*eventSet)(nil)

func newEventSet(s *Sim) *eventSet {
	ats := make([]time.Duration, len(s.nvmlEvents))
	for i, e := range s.nvmlEvents {
		ats[i] = e.At
	}
	es := &eventSet{
		EventSet: &mock.EventSet{},
		sim:      s,
		tl:       timeline{ats: ats, loop: s.scn.Duration},
		done:     make(chan struct{}),
	}
	fillNotSupported(es.EventSet)
	es.next = es.tl.firstFrom(s.elapsed())
	return es
}

func (es *eventSet) register(gpu int, types uint64) nvml.Return {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	es.masks[gpu] |= types
	return nvml.SUCCESS
}

// Wait returns the next due Xid event, blocking up to timeoutMs for one to
// come due; ERROR_TIMEOUT when none does. Free ends a blocked Wait.
func (es *eventSet) Wait(timeoutMs uint32) (nvml.EventData, nvml.Return) {
	if !es.sim.up() {
		return nvml.EventData{}, nvml.ERROR_UNINITIALIZED
	}
	deadline := time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	for {
		data, untilNext, ret := es.poll()
		if ret != nvml.ERROR_TIMEOUT {
			return data, ret
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nvml.EventData{}, nvml.ERROR_TIMEOUT
		}
		sleep := left
		if untilNext >= 0 && untilNext < sleep {
			// The next event's time is read off the injected clock; waking
			// then re-reads it, so a fake clock that did not move simply
			// waits again until the real deadline.
			sleep = max(untilNext, time.Millisecond)
		}
		timer := time.NewTimer(sleep)
		select {
		case <-timer.C:
		case <-es.done:
			timer.Stop()
			return nvml.EventData{}, nvml.ERROR_INVALID_ARGUMENT
		}
	}
}

// poll returns a due event (SUCCESS), or ERROR_TIMEOUT with the time until
// the next occurrence (-1 if none will come).
func (es *eventSet) poll() (nvml.EventData, time.Duration, nvml.Return) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.freed {
		return nvml.EventData{}, 0, nvml.ERROR_INVALID_ARGUMENT
	}
	el := es.sim.elapsed()
	es.next = es.tl.catchUp(es.next, el)
	for {
		t, ok := es.tl.at(es.next)
		if !ok {
			return nvml.EventData{}, -1, nvml.ERROR_TIMEOUT
		}
		if t > el {
			return nvml.EventData{}, t - el, nvml.ERROR_TIMEOUT
		}
		e := es.sim.nvmlEvents[es.tl.item(es.next)]
		es.next++
		if es.masks[e.GPU]&nvml.EventTypeXidCriticalError == 0 {
			continue
		}
		return nvml.EventData{
			Device:            es.sim.devices[e.GPU],
			EventType:         nvml.EventTypeXidCriticalError,
			EventData:         e.Xid,
			GpuInstanceId:     noInstance,
			ComputeInstanceId: noInstance,
		}, 0, nvml.SUCCESS
	}
}

// Free releases the set; a Wait in progress returns.
func (es *eventSet) Free() nvml.Return {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	es.freed = true
	close(es.done)
	return nvml.SUCCESS
}

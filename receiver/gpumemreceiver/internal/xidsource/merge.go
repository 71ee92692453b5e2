package xidsource

import (
	"context"
	"time"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// merge pairs the NVML and kernel reports of one Xid (same GPU and code within
// MergeWindow) and emits each occurrence once its window has passed.
func (x *Source) merge(ctx context.Context) {
	defer x.wg.Done()
	newTicker := x.newTicker
	if newTicker == nil {
		newTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	tick, stopTick := newTicker(MergeWindow / 4)
	defer stopTick()
	var pending []Event
	flush := func(all bool) {
		now := x.now()
		var out []Event
		kept := pending[:0]
		for _, p := range pending {
			if all || now.Sub(p.Arrived) >= MergeWindow {
				out = append(out, p)
			} else {
				kept = append(kept, p)
			}
		}
		pending = kept
		if len(out) > 0 {
			x.ResolveDevices(out)
			x.emit(out)
		}
	}
	for {
		select {
		case <-ctx.Done():
			for {
				select {
				case e := <-x.queue:
					pending = MergeInto(pending, e)
				default:
					flush(true)
					return
				}
			}
		case e := <-x.queue:
			pending = MergeInto(pending, e)
		case <-tick:
			flush(false)
		}
	}
}

// MergeInto adds e to pending, folding it into its twin from the other source if one waits.
func MergeInto(pending []Event, e Event) []Event {
	for i := range pending {
		p := &pending[i]
		if p.Code == e.Code && p.BusID == e.BusID && p.Kmsg && e.Kmsg && p.Inferred != e.Inferred {
			// Xid 79: the driver prints the numbered line and the "fallen off the bus" line.
			if p.Inferred {
				p.Inferred, p.Time, p.PID, p.HasPID, p.Name, p.Text = false, e.Time, e.PID, e.HasPID, e.Name, e.Text
			}
			return pending
		}
		if p.Code != e.Code || p.NVML == e.NVML || p.BusID != e.BusID || absDuration(p.Arrived.Sub(e.Arrived)) > MergeWindow {
			continue
		}
		if e.MIGNamed && !p.MIGNamed {
			p.MIGNamed, p.GI, p.CI = true, e.GI, e.CI
		}
		if e.Kmsg { // the kernel line names the process and carries the text and the time
			p.Kmsg, p.Time, p.PID, p.HasPID, p.Name, p.Text, p.Inferred = true, e.Time, e.PID, e.HasPID, e.Name, e.Text, e.Inferred
		} else { // NVML names the exact GPU
			p.NVML, p.Dev = true, e.Dev
		}
		return pending
	}
	return append(pending, e)
}

// ResolveDevices finds the GPU of kernel-only events by bus id; a GPU NVML does not list
// (fallen off the bus) keeps its bus id alone. An event naming a MIG instance goes to that
// instance where it is known, else stays with the GPU.
func (x *Source) ResolveDevices(events []Event) {
	_ = x.sess.WithDevices(func(_ string, devs []*nvmlx.Device) {
		for i := range events {
			e := &events[i]
			if e.Dev == nil {
				for _, d := range devs {
					if d.BusID == e.BusID {
						e.Dev = d
						break
					}
				}
			}
			if e.MIGNamed && e.Dev != nil && e.Dev.Parent == nil {
				if inst := e.Dev.InstanceByID(e.GI, e.CI); inst != nil {
					e.Dev = inst
				}
			}
		}
	})
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

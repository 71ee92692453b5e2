package gpumemreceiver

import (
	"context"
	"time"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// merge pairs the NVML and kernel reports of one Xid (same GPU and code within
// xidMergeWindow) and emits each occurrence once its window has passed.
func (x *xidSource) merge(ctx context.Context) {
	defer x.wg.Done()
	newTicker := x.newTicker
	if newTicker == nil {
		newTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	tick, stopTick := newTicker(xidMergeWindow / 4)
	defer stopTick()
	var pending []xidEvent
	flush := func(all bool) {
		now := x.now()
		var out []xidEvent
		kept := pending[:0]
		for _, p := range pending {
			if all || now.Sub(p.arrived) >= xidMergeWindow {
				out = append(out, p)
			} else {
				kept = append(kept, p)
			}
		}
		pending = kept
		if len(out) > 0 {
			x.resolveDevices(out)
			x.emit(out)
		}
	}
	for {
		select {
		case <-ctx.Done():
			for {
				select {
				case e := <-x.queue:
					pending = mergeInto(pending, e)
				default:
					flush(true)
					return
				}
			}
		case e := <-x.queue:
			pending = mergeInto(pending, e)
		case <-tick:
			flush(false)
		}
	}
}

// mergeInto adds e to pending, folding it into its twin from the other source if one waits.
func mergeInto(pending []xidEvent, e xidEvent) []xidEvent {
	for i := range pending {
		p := &pending[i]
		if p.code == e.code && p.busID == e.busID && p.kmsg && e.kmsg && p.inferred != e.inferred {
			// Xid 79: the driver prints the numbered line and the "fallen off the bus" line.
			if p.inferred {
				p.inferred, p.time, p.pid, p.hasPID, p.name, p.text = false, e.time, e.pid, e.hasPID, e.name, e.text
			}
			return pending
		}
		if p.code != e.code || p.nvml == e.nvml || p.busID != e.busID || absDuration(p.arrived.Sub(e.arrived)) > xidMergeWindow {
			continue
		}
		if e.migNamed && !p.migNamed {
			p.migNamed, p.gi, p.ci = true, e.gi, e.ci
		}
		if e.kmsg { // the kernel line names the process and carries the text and the time
			p.kmsg, p.time, p.pid, p.hasPID, p.name, p.text, p.inferred = true, e.time, e.pid, e.hasPID, e.name, e.text, e.inferred
		} else { // NVML names the exact GPU
			p.nvml, p.dev = true, e.dev
		}
		return pending
	}
	return append(pending, e)
}

// resolveDevices finds the GPU of kernel-only events by bus id; a GPU NVML does not list
// (fallen off the bus) keeps its bus id alone. An event naming a MIG instance goes to that
// instance where it is known, else stays with the GPU.
func (x *xidSource) resolveDevices(events []xidEvent) {
	_ = x.sess.WithDevices(func(_ string, devs []*nvmlx.Device) {
		for i := range events {
			e := &events[i]
			if e.dev == nil {
				for _, d := range devs {
					if d.BusID == e.busID {
						e.dev = d
						break
					}
				}
			}
			if e.migNamed && e.dev != nil && e.dev.Parent == nil {
				if inst := e.dev.InstanceByID(e.gi, e.ci); inst != nil {
					e.dev = inst
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

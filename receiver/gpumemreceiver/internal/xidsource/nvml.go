package xidsource

import (
	"context"
	"errors"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// watchNVML waits for the session, registers every device that supports Xid events, and
// waits on the event set until Shutdown. When the session is released (the driver went
// away) the set died with it: it waits for the session again and registers anew.
func (x *Source) watchNVML(ctx context.Context) {
	defer x.wg.Done()
	for x.awaitSession(ctx) {
		gen := x.sess.Generation()
		set, devices := x.registerXidEvents()
		if set == nil {
			return
		}
		x.waitXidEvents(ctx, set, gen, devices)
		// Freed only under the generation that made it: NVML's shutdown took it otherwise.
		_ = x.sess.WithDevices(func(string, []*nvmlx.Device) {
			if x.sess.Generation() == gen {
				set.Free()
			}
		})
		if ctx.Err() != nil {
			return
		}
	}
}

// awaitSession polls until NVML is up; false when ctx ends first.
func (x *Source) awaitSession(ctx context.Context) bool {
	for !x.sess.IsUp() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
	return true
}

// registerXidEvents creates an event set and registers each GPU that reports Xid events
// through NVML; set is nil when none can be had.
func (x *Source) registerXidEvents() (set nvml.EventSet, devices []*nvmlx.Device) {
	_ = x.sess.WithDevices(func(_ string, devs []*nvmlx.Device) {
		s, r := x.lib.EventSetCreate()
		if r != nvml.SUCCESS {
			x.logger.Warn("NVML Xid events unavailable: cannot create an event set", zap.Error(r))
			return
		}
		for _, d := range devs {
			if !d.HasEventCalls() {
				continue
			}
			types, r := d.Handle.GetSupportedEventTypes()
			if r != nvml.SUCCESS || types&nvml.EventTypeXidCriticalError == 0 {
				x.logger.Debug("GPU does not report Xid events through NVML", zap.String("gpu", d.UUID), zap.Error(r))
				continue
			}
			if r := d.Handle.RegisterEvents(nvml.EventTypeXidCriticalError, s); r != nvml.SUCCESS {
				x.logger.Warn("cannot register for Xid events", zap.String("gpu", d.UUID), zap.Error(r))
				continue
			}
			devices = append(devices, d)
		}
		set = s
	})
	return set, devices
}

// waitXidEvents waits on the set with a timeout, so it notices Shutdown, and queues each Xid.
// A failing wait is logged when it starts and when it recovers, not per attempt.
func (x *Source) waitXidEvents(ctx context.Context, set nvml.EventSet, gen uint64, devices []*nvmlx.Device) {
	failing := false
	for ctx.Err() == nil {
		var data nvml.EventData
		r := nvml.ERROR_UNINITIALIZED
		var (
			d   *nvmlx.Device
			bus string
		)
		stale := false
		err := x.sess.WithDevices(func(string, []*nvmlx.Device) {
			if stale = x.sess.Generation() != gen; stale {
				return
			}
			data, r = set.Wait(uint32(nvmlWaitTimeout / time.Millisecond))
			// Handles and bus ids change (a GPU back after a reset) under the session's lock only.
			if r != nvml.SUCCESS {
				return
			}
			if d = deviceOf(devices, data.Device); d != nil {
				bus = d.BusID
			}
		})
		if stale || errors.Is(err, nvmlx.ErrDown) {
			return // released: the set is gone with the library
		}
		switch r {
		case nvml.SUCCESS:
			if failing {
				x.logger.Info("NVML event wait recovered")
				failing = false
			}
			if data.EventType&nvml.EventTypeXidCriticalError == 0 {
				continue
			}
			e := Event{Time: x.now(), Code: int(data.EventData), NVML: true, Dev: d}
			if data.GpuInstanceId != noMIGInstance {
				e.MIGNamed, e.GI, e.CI = true, int(data.GpuInstanceId), migID(data.ComputeInstanceId)
			}
			e.BusID = bus
			x.Add(e)
		case nvml.ERROR_TIMEOUT:
		default:
			if !failing {
				x.logger.Warn("NVML event wait failing; retrying each second", zap.Error(r))
				failing = true
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// noMIGInstance is the instance id of NVML event data not from a MIG instance.
const noMIGInstance = 0xFFFFFFFF

// migID is an instance id of NVML's event data; noMIGInstance gives -1.
func migID(id uint32) int {
	if id == noMIGInstance {
		return -1
	}
	return int(id)
}

func deviceOf(devices []*nvmlx.Device, h nvml.Device) *nvmlx.Device {
	for _, d := range devices {
		if d.Handle == h {
			return d
		}
	}
	return nil
}

package gpumemreceiver

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/kmsg"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

const (
	// xidQueueSize bounds the events waiting to be merged; beyond it events are dropped and
	// counted rather than blocking the NVML wait loop or the kernel log reader.
	xidQueueSize = 1024
	// xidMergeWindow is how long an event waits for its twin from the other source. The
	// driver prints the kernel line and signals the NVML event within milliseconds.
	xidMergeWindow = 2 * time.Second
	// nvmlWaitTimeout bounds each NVML event wait, so Shutdown is never blocked for long.
	nvmlWaitTimeout = 500 * time.Millisecond
)

// xidEvent is one Xid occurrence, from NVML, the kernel log, or both once merged.
type xidEvent struct {
	time     time.Time
	arrived  time.Time
	code     int
	inferred bool // "GPU has fallen off the bus" lines carry no number: 79
	busID    string
	dev      *device // nil when NVML does not (or no longer) know the GPU
	// migNamed: the driver names a MIG instance ("GPU-I:05"): its GPU instance id gi and
	// compute instance id ci (-1 when not given).
	migNamed bool
	gi, ci   int
	pid      int
	hasPID   bool
	name     string
	text     string // the driver's kernel line, when the kernel log saw it
	nvml     bool
	kmsg     bool
}

func (e *xidEvent) source() string {
	switch {
	case e.nvml && e.kmsg:
		return metadata.LogXidSourceBoth
	case e.nvml:
		return metadata.LogXidSourceNVML
	default:
		return metadata.LogXidSourceKmsg
	}
}

// xidSource watches NVML's Xid events and the kernel log, merges the two reports of one
// occurrence, and hands each occurrence to emit once. It owns its goroutines.
type xidSource struct {
	sess      *session
	lib       nvml.Interface
	kmsgPath  string
	nvmlWatch bool
	boot      time.Time
	logger    *zap.Logger
	now       func() time.Time
	emit      func([]xidEvent)
	tel       *xidTelemetry // counts drops; nil in tests that need none
	// newTicker paces the merge's flushes; nil is time.NewTicker. Tests drive it by hand
	// with now, so merging takes no real time.
	newTicker func(time.Duration) (tick <-chan time.Time, stop func())

	queue   chan xidEvent
	queued  atomic.Int64 // events accepted into the queue
	dropped atomic.Int64
	reader  *kmsg.Reader

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (x *xidSource) start() {
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	x.queue = make(chan xidEvent, xidQueueSize)
	if x.kmsgPath != "" {
		r, err := kmsg.Open(x.kmsgPath, kmsg.Options{})
		switch {
		case errors.Is(err, fs.ErrPermission):
			x.logger.Warn("cannot read the kernel log: it needs CAP_SYSLOG (or root), and in a container the device must also be allowed to it; Xid events come from NVML alone, without the driver's text and process name",
				zap.String("kmsg_path", x.kmsgPath), zap.Error(err))
		case err != nil:
			x.logger.Warn("cannot open the kernel log; Xid events come from NVML alone",
				zap.String("kmsg_path", x.kmsgPath), zap.Error(err))
		default:
			x.reader = r
			x.wg.Add(1)
			go x.watchKmsg(ctx)
		}
	}
	if x.nvmlWatch {
		x.wg.Add(1)
		go x.watchNVML(ctx)
	}
	x.wg.Add(1)
	go x.merge(ctx)
}

// shutdown stops the watchers and flushes events still waiting for their twin.
func (x *xidSource) shutdown() {
	if x.cancel == nil {
		return
	}
	x.cancel()
	if x.reader != nil {
		_ = x.reader.Close()
	}
	x.wg.Wait()
	x.cancel = nil
	if n := x.dropped.Load(); n > 0 {
		x.logger.Warn("Xid events dropped because the queue was full", zap.Int64("dropped", n))
	}
}

func (x *xidSource) enqueue(e xidEvent) {
	e.arrived = x.now()
	select {
	case x.queue <- e:
		x.queued.Add(1)
	default:
		x.tel.drop()
		if x.dropped.Add(1) == 1 {
			x.logger.Warn("Xid event queue full: dropping events; otelcol_receiver_gpu_mem_xid_events_dropped counts them and the total is logged at shutdown", zap.Int("capacity", xidQueueSize))
		}
	}
}

func (x *xidSource) watchKmsg(ctx context.Context) {
	defer x.wg.Done()
	for {
		rec, err := x.reader.Next(ctx)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, kmsg.ErrClosed) {
				x.logger.Warn("kernel log reader stopped", zap.String("kmsg_path", x.kmsgPath), zap.Error(err))
			}
			return
		}
		ev, ok := xid.ParseLine(rec.Text)
		if !ok {
			continue
		}
		x.enqueue(xidEvent{
			time: rec.Time(x.boot), code: ev.Code, inferred: ev.CodeInferred, busID: ev.BusID,
			pid: ev.PID, hasPID: ev.HasPID, name: ev.ProcessName, text: rec.Text, kmsg: true,
			migNamed: ev.GPUInstanceID >= 0, gi: ev.GPUInstanceID, ci: ev.ComputeInstanceID,
		})
	}
}

// watchNVML waits for the session, registers every device that supports Xid events, and
// waits on the event set until Shutdown.
func (x *xidSource) watchNVML(ctx context.Context) {
	defer x.wg.Done()
	if !x.awaitSession(ctx) {
		return
	}
	set, devices := x.registerXidEvents()
	if set == nil {
		return
	}
	defer func() { _ = x.sess.withDevices(func(string, []*device) { set.Free() }) }()
	x.waitXidEvents(ctx, set, devices)
}

// awaitSession polls until NVML is up; false when ctx ends first.
func (x *xidSource) awaitSession(ctx context.Context) bool {
	for !x.sess.isUp() {
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
func (x *xidSource) registerXidEvents() (set nvml.EventSet, devices []*device) {
	_ = x.sess.withDevices(func(_ string, devs []*device) {
		s, r := x.lib.EventSetCreate()
		if r != nvml.SUCCESS {
			x.logger.Warn("NVML Xid events unavailable: cannot create an event set", zap.Error(r))
			return
		}
		for _, d := range devs {
			if !d.syms.has(symSupportedEventTypes, symDeviceRegisterEvents) {
				continue
			}
			types, r := d.handle.GetSupportedEventTypes()
			if r != nvml.SUCCESS || types&nvml.EventTypeXidCriticalError == 0 {
				x.logger.Debug("GPU does not report Xid events through NVML", zap.String("gpu", d.uuid), zap.Error(r))
				continue
			}
			if r := d.handle.RegisterEvents(nvml.EventTypeXidCriticalError, s); r != nvml.SUCCESS {
				x.logger.Warn("cannot register for Xid events", zap.String("gpu", d.uuid), zap.Error(r))
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
func (x *xidSource) waitXidEvents(ctx context.Context, set nvml.EventSet, devices []*device) {
	failing := false
	for ctx.Err() == nil {
		var data nvml.EventData
		r := nvml.ERROR_UNINITIALIZED
		var (
			d   *device
			bus string
		)
		_ = x.sess.withDevices(func(string, []*device) {
			data, r = set.Wait(uint32(nvmlWaitTimeout / time.Millisecond))
			// Handles and bus ids change (a GPU back after a reset) under the session's lock only.
			if r != nvml.SUCCESS {
				return
			}
			if d = deviceOf(devices, data.Device); d != nil {
				bus = d.busID
			}
		})
		switch r {
		case nvml.SUCCESS:
			if failing {
				x.logger.Info("NVML event wait recovered")
				failing = false
			}
			if data.EventType&nvml.EventTypeXidCriticalError == 0 {
				continue
			}
			e := xidEvent{time: x.now(), code: int(data.EventData), nvml: true, dev: d}
			if data.GpuInstanceId != noMIGInstance {
				e.migNamed, e.gi, e.ci = true, int(data.GpuInstanceId), migID(data.ComputeInstanceId)
			}
			e.busID = bus
			x.enqueue(e)
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

func deviceOf(devices []*device, h nvml.Device) *device {
	for _, d := range devices {
		if d.handle == h {
			return d
		}
	}
	return nil
}

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
	_ = x.sess.withDevices(func(_ string, devs []*device) {
		for i := range events {
			e := &events[i]
			if e.dev == nil {
				for _, d := range devs {
					if d.busID == e.busID {
						e.dev = d
						break
					}
				}
			}
			if e.migNamed && e.dev != nil && e.dev.parent == nil {
				if inst := e.dev.instanceByID(e.gi, e.ci); inst != nil {
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

package xidsource

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
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

const (
	// DefaultQueueSize bounds the events waiting to be merged; beyond it events are dropped
	// and counted rather than blocking the NVML wait loop or the kernel log reader.
	DefaultQueueSize = 1024
	// MergeWindow is how long an event waits for its twin from the other source. The
	// driver prints the kernel line and signals the NVML event within milliseconds.
	MergeWindow = 2 * time.Second
	// nvmlWaitTimeout bounds each NVML event wait, so Shutdown is never blocked for long.
	nvmlWaitTimeout = 500 * time.Millisecond
)

// Event is one Xid occurrence, from NVML, the kernel log, or both once merged.
type Event struct {
	Time     time.Time
	Arrived  time.Time
	Code     int
	Inferred bool // "GPU has fallen off the bus" lines carry no number: 79
	BusID    string
	Dev      *nvmlx.Device // nil when NVML does not (or no longer) know the GPU
	// MIGNamed: the driver names a MIG instance ("GPU-I:05"): its GPU instance id GI and
	// compute instance id CI (-1 when not given).
	MIGNamed bool
	GI, CI   int
	PID      int
	HasPID   bool
	Name     string
	Text     string // the driver's kernel line, when the kernel log saw it
	NVML     bool
	Kmsg     bool
}

// Source says where the event was seen: NVML, the kernel log, or both.
func (e *Event) Source() string {
	switch {
	case e.NVML && e.Kmsg:
		return metadata.LogXidSourceBoth
	case e.NVML:
		return metadata.LogXidSourceNVML
	default:
		return metadata.LogXidSourceKmsg
	}
}

// Options is what a Source is handed: the NVML session and library it watches, the kernel
// log, and where the merged occurrences go.
type Options struct {
	Sess      *nvmlx.Session
	Lib       nvml.Interface
	KmsgPath  string // "" for none
	NVMLWatch bool   // watch NVML's Xid events
	Boot      time.Time
	Logger    *zap.Logger
	Now       func() time.Time
	// Emit receives each merged occurrence once, from the merge goroutine.
	Emit func([]Event)
	// Dropped, when set, counts each event lost to a full queue.
	Dropped func()
	// NewTicker paces the merge's flushes; nil is time.NewTicker. Tests drive it by hand
	// with Now, so merging takes no real time.
	NewTicker func(time.Duration) (tick <-chan time.Time, stop func())
	// QueueSize bounds the events waiting to be merged; 0 is DefaultQueueSize.
	QueueSize int
}

// Source watches NVML's Xid events and the kernel log, merges the two reports of one
// occurrence, and hands each occurrence to Emit once. It owns its goroutines.
type Source struct {
	sess      *nvmlx.Session
	lib       nvml.Interface
	kmsgPath  string
	nvmlWatch bool
	boot      time.Time
	logger    *zap.Logger
	now       func() time.Time
	emit      func([]Event)
	onDrop    func()
	newTicker func(time.Duration) (tick <-chan time.Time, stop func())

	queue   chan Event
	queued  atomic.Int64 // events accepted into the queue
	dropped atomic.Int64
	reader  *kmsg.Reader

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New prepares a source; nothing is watched before Start.
func New(o Options) *Source {
	size := o.QueueSize
	if size <= 0 {
		size = DefaultQueueSize
	}
	return &Source{
		sess: o.Sess, lib: o.Lib, kmsgPath: o.KmsgPath, nvmlWatch: o.NVMLWatch, boot: o.Boot,
		logger: o.Logger, now: o.Now, emit: o.Emit, onDrop: o.Dropped, newTicker: o.NewTicker,
		queue: make(chan Event, size),
	}
}

// Queued counts the events accepted into the queue; Waiting is how many the merge has not
// taken in yet; Dropped counts those lost to a full queue.
func (x *Source) Queued() int64  { return x.queued.Load() }
func (x *Source) Waiting() int   { return len(x.queue) }
func (x *Source) Dropped() int64 { return x.dropped.Load() }

// Start opens the kernel log and starts the watchers and the merge.
func (x *Source) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
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

// Shutdown stops the watchers and flushes events still waiting for their twin.
func (x *Source) Shutdown() {
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

// Add hands one event to the merge; dropped and counted when the queue is full.
func (x *Source) Add(e Event) {
	e.Arrived = x.now()
	select {
	case x.queue <- e:
		x.queued.Add(1)
	default:
		if x.onDrop != nil {
			x.onDrop()
		}
		if x.dropped.Add(1) == 1 {
			x.logger.Warn("Xid event queue full: dropping events; otelcol_receiver_gpu_mem_xid_events_dropped counts them and the total is logged at shutdown", zap.Int("capacity", cap(x.queue)))
		}
	}
}

func (x *Source) watchKmsg(ctx context.Context) {
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
		x.Add(Event{
			Time: rec.Time(x.boot), Code: ev.Code, Inferred: ev.CodeInferred, BusID: ev.BusID,
			PID: ev.PID, HasPID: ev.HasPID, Name: ev.ProcessName, Text: rec.Text, Kmsg: true,
			MIGNamed: ev.GPUInstanceID >= 0, GI: ev.GPUInstanceID, CI: ev.ComputeInstanceID,
		})
	}
}

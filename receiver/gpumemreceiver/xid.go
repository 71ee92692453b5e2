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
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
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
	dev      *nvmlx.Device // nil when NVML does not (or no longer) know the GPU
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
	sess      *nvmlx.Session
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

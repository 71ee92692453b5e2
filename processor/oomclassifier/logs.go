package oomclassifier

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// logsProcessor is the logs side of one pipeline. It recognises OOM and Xid records when a
// batch arrives, and classifies the OOMs when the window covers their moment or decision_wait
// has passed, whichever is first. Batches leave in arrival order: one arriving behind a held
// batch waits behind it.
type logsProcessor struct {
	inst    *instance
	next    consumer.Logs
	release func()
	wait    time.Duration
	clock   clock

	mu      sync.Mutex
	queue   []*heldBatch // in arrival order; the head stays until forwarded
	running bool         // the worker runs and will drain the queue
	wakeCh  chan struct{}
	stopCh  chan struct{}
	doneCh  chan struct{}
	slots   chan struct{}

	startOnce, stopOnce sync.Once
}

func newLogsProcessor(inst *instance, next consumer.Logs, release func()) *logsProcessor {
	return &logsProcessor{
		inst: inst, next: next, release: release, wait: inst.cfg.DecisionWait, clock: inst.clock,
		wakeCh: make(chan struct{}, 1), stopCh: make(chan struct{}), doneCh: make(chan struct{}),
		slots: make(chan struct{}, maxHeldBatches),
	}
}

func (p *logsProcessor) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (p *logsProcessor) Start(context.Context, component.Host) error {
	p.inst.warnIfLogsOnly()
	p.startOnce.Do(func() {
		if p.wait <= 0 {
			return // nothing is ever held: no worker needed
		}
		p.mu.Lock()
		p.running = true
		p.mu.Unlock()
		p.inst.addWaiter(p.wakeCh)
		go p.worker()
	})
	return nil
}

// Shutdown classifies and forwards everything held, then releases the shared instance.
func (p *logsProcessor) Shutdown(ctx context.Context) error {
	var err error
	p.stopOnce.Do(func() {
		p.startOnce.Do(func() {}) // a later Start must not launch a worker
		p.mu.Lock()
		running := p.running
		p.mu.Unlock()
		if running {
			close(p.stopCh)
			select {
			case <-p.doneCh:
			case <-ctx.Done():
				err = ctx.Err()
			}
			p.inst.removeWaiter(p.wakeCh)
		}
		p.release()
	})
	return err
}

func (p *logsProcessor) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	ooms := p.scan(ctx, ld)
	p.mu.Lock()
	if len(p.queue) == 0 && (!p.running || !p.mustHold(ooms)) {
		p.mu.Unlock()
		p.classify(ctx, ooms)
		return p.next.ConsumeLogs(ctx, ld)
	}
	p.mu.Unlock()

	select { // a slot first, so that a full queue pushes back instead of growing
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	if !p.running { // the worker finished draining while we waited: nothing is queued now
		p.mu.Unlock()
		<-p.slots
		p.classify(ctx, ooms)
		return p.next.ConsumeLogs(ctx, ld)
	}
	// The caller's deadline must not cut the forwarding short, but its values (client
	// metadata) travel on.
	p.queue = append(p.queue, &heldBatch{ctx: context.WithoutCancel(ctx), ld: ld, ooms: ooms, deadline: p.clock.Now().Add(p.wait)})
	p.mu.Unlock()
	select {
	case p.wakeCh <- struct{}{}:
	default:
	}
	return nil
}

// scan recognises the batch's Xid and OOM records. Xids go into the window at once, so that a
// fault logged in the same batch as the OOM counts as evidence.
func (p *logsProcessor) scan(ctx context.Context, ld plog.Logs) []oomRecord {
	var ooms []oomRecord
	var o oomRecord
	records, xidLines := 0, 0
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		res := rls.At(i).Resource().Attributes()
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			records += lrs.Len()
			for k := 0; k < lrs.Len(); k++ {
				rec := lrs.At(k)
				// The receiver's own records, told by their event name (looked up once).
				switch eventName(rec) {
				case eventXid:
					if x, ok := receiverXid(rec, res); ok {
						x.T, _ = p.inst.plausibleTime(rec, x.T)
						p.inst.recordOverflow(ctx, p.inst.store.ObserveXid(str(res, resHostName), x))
						continue
					}
				case eventOOMPredicted:
					if hwID, pr, ok := receiverPrediction(rec, res); ok {
						pr.T, _ = p.inst.plausibleTime(rec, pr.T)
						p.inst.predictions.observe(str(res, resHostName), hwID, pr)
						continue
					}
				}
				if x, ok := kernelXid(rec, res); ok {
					xidLines++
					x.T, _ = p.inst.plausibleTime(rec, x.T)
					p.inst.recordOverflow(ctx, p.inst.store.ObserveXid(str(res, resHostName), x))
					continue
				}
				// o is reused: an ordinary line costs no record built and copied.
				if findOOMInto(rec, res, &o) {
					stitch(&o, lrs, k)
					o.at, o.timeNote = p.inst.plausibleTime(rec, o.at)
					ooms = append(ooms, o)
					o = oomRecord{}
				}
			}
		}
	}
	p.inst.telemetry.Records.Add(ctx, int64(records))
	if xidLines > 0 {
		p.inst.telemetry.XidLines.Add(ctx, int64(xidLines))
	}
	return ooms
}

func (p *logsProcessor) classify(ctx context.Context, ooms []oomRecord) {
	for _, o := range ooms {
		res := classifyOOM(o, p.inst)
		p.inst.telemetry.OOMs.Add(ctx, 1, metric.WithAttributes(
			attribute.String("framework", o.msg.Framework), attribute.String("cause", res.Cause)))
		p.inst.logger.Debug("Classified GPU OOM", zap.String("framework", o.msg.Framework),
			zap.String("cause", res.Cause), zap.String("confidence", res.Confidence), zap.String("host", o.host))
	}
}

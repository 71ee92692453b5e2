package oomclassifier

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// logsProcessor is the logs side of one pipeline. It recognises OOM and Xid records when a
// batch arrives, and classifies the OOMs when the window covers their moment or decision_wait
// has passed, whichever is first. Only the part of a batch that belongs to a host still waiting
// is held (split by resource); the rest goes on in the call. Each host's records leave in the
// order they came: a part arriving behind a held part of its host waits behind it.
//
// The standard processor telemetry (otelcol_processor_incoming_items, _outgoing_items) counts
// what arrives and what goes on in the call; held parts add to _held and, when forwarded, to
// _released.
type logsProcessor struct {
	consumer.Logs // processorhelper's wrapper around processLogs: the standard telemetry

	inst    *instance
	next    consumer.Logs
	release func()
	wait    time.Duration
	clock   clock

	mu      sync.Mutex
	hosts   map[string]*hostQueue // hosts with parts held or in flight
	seq     uint64                // arrival counter of held parts
	held    int                   // parts held or in flight
	waiting int                   // callers waiting for room in a full queue
	running bool                  // the worker runs and will drain the queue
	wakeCh  chan struct{}
	stopCh  chan struct{}
	doneCh  chan struct{}
	slots   chan struct{} // one per held part: the queue's bound

	startOnce, stopOnce sync.Once
}

func newLogsProcessor(ctx context.Context, set processor.Settings, cfg component.Config, inst *instance, next consumer.Logs, release func()) (*logsProcessor, error) {
	p := &logsProcessor{
		inst: inst, next: next, release: release, wait: inst.cfg.DecisionWait, clock: inst.clock,
		hosts:  make(map[string]*hostQueue),
		wakeCh: make(chan struct{}, 1), stopCh: make(chan struct{}), doneCh: make(chan struct{}),
		slots: make(chan struct{}, maxHeldBatches),
	}
	helper, err := processorhelper.NewLogs(ctx, set, cfg, next, p.processLogs,
		// Enrichment writes attributes, and splitting moves resources between batches.
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
	if err != nil {
		return nil, fmt.Errorf("create %s logs processor: %w", set.ID, err)
	}
	p.Logs = helper
	return p, nil
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

// processLogs classifies what can be classified now and returns it to go on; the parts of
// hosts that must wait are held and forwarded later by the worker.
func (p *logsProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	ooms := p.scan(ctx, ld)
	var hold map[string]bool
	p.mu.Lock()
	if p.running {
		hold = p.hostsToHold(ld, ooms)
	}
	p.mu.Unlock()
	if len(hold) == 0 {
		p.classify(ctx, ooms, "")
		return ld, nil
	}

	parts, hosts, whole := splitHeld(ld, hold)
	heldOOMs := make(map[string][]oomRecord, len(hold))
	now := ooms[:0:0]
	for _, o := range ooms {
		if hold[o.host] {
			heldOOMs[o.host] = append(heldOOMs[o.host], o)
		} else {
			now = append(now, o)
		}
	}
	p.classify(ctx, now, "")
	for _, h := range hosts {
		if p.enqueue(ctx, h, parts[h], heldOOMs[h]) {
			continue
		}
		p.classify(ctx, heldOOMs[h], "") // stopped meanwhile: nothing of the host is held now
		if whole {
			return ld, nil
		}
		parts[h].ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	}
	if whole || ld.ResourceLogs().Len() == 0 {
		return ld, processorhelper.ErrSkipProcessingData // all of it is held
	}
	return ld, nil
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
			sx := newStreams(lrs)
			for k := 0; k < lrs.Len(); k++ {
				rec := lrs.At(k)
				if ordinaryRecord(rec) {
					continue
				}
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
				// A record an upstream classifier (an agent's, behind this gateway) already
				// classified passes untouched: classified once, counted once.
				if _, done := rec.Attributes().Get(attrCause); done {
					continue
				}
				// o is reused: an ordinary line costs no record built and copied.
				if findOOMInto(rec, res, &o) {
					stitch(&o, &sx, k)
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

// classify classifies the OOMs and writes the result onto their records; note, when set, is
// added to each one's evidence.
func (p *logsProcessor) classify(ctx context.Context, ooms []oomRecord, note string) {
	for _, o := range ooms {
		if note != "" { // o is a copy: the note goes only into this classification
			o.timeNote = strings.TrimSpace(o.timeNote + " " + note)
		}
		res := classifyOOM(o, p.inst)
		putDeviceKind(o)
		if !gpuOOM(o) {
			// Pinned host memory: annotated, never counted as a GPU OOM.
			p.inst.logger.Debug("Classified pinned host allocation failure", zap.String("framework", o.msg.Framework),
				zap.String("host", o.host))
			continue
		}
		p.inst.telemetry.OOMs.Add(ctx, 1, metric.WithAttributes(
			attribute.String("framework", o.msg.Framework), attribute.String("cause", res.Cause)))
		p.inst.logger.Debug("Classified GPU OOM", zap.String("framework", o.msg.Framework),
			zap.String("cause", res.Cause), zap.String("confidence", res.Confidence), zap.String("host", o.host))
	}
}

package oomclassifier

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
)

// This file is the hold path: the queue of batches whose OOMs wait for their metrics, and the
// worker that releases them in order.

// maxHeldBatches bounds the batches one logs side holds. A full queue blocks the caller
// (back-pressure) rather than dropping: the guarantee is that nothing is dropped.
const maxHeldBatches = 1024

type heldBatch struct {
	ctx      context.Context
	ld       plog.Logs
	ooms     []oomRecord
	deadline time.Time
}

// mustHold reports whether an OOM of the batch lacks the metrics of its moment.
func (p *logsProcessor) mustHold(ooms []oomRecord) bool {
	for _, o := range ooms {
		if !p.inst.store.Covered(o.host, o.at) {
			return true
		}
	}
	return false
}

// worker forwards held batches in order: the head when it is covered or due, or at once when
// stopping; batches without OOMs as soon as they reach the head.
func (p *logsProcessor) worker() {
	defer close(p.doneCh)
	stopping := false
	for {
		p.mu.Lock()
		if len(p.queue) == 0 && stopping {
			p.running = false
			p.mu.Unlock()
			return
		}
		var head *heldBatch
		if len(p.queue) > 0 {
			head = p.queue[0]
		}
		p.mu.Unlock()

		if head != nil && (stopping || !p.clock.Now().Before(head.deadline) || !p.mustHold(head.ooms)) {
			p.classify(head.ctx, head.ooms)
			if err := p.next.ConsumeLogs(head.ctx, head.ld); err != nil {
				p.inst.telemetry.ForwardErrors.Add(head.ctx, 1)
				p.inst.logger.Warn("Next consumer refused a held log batch", zap.Error(err))
			}
			p.mu.Lock()
			p.queue[0] = nil
			p.queue = p.queue[1:]
			p.mu.Unlock()
			<-p.slots
			continue
		}
		var due <-chan time.Time // nil with nothing held: only a wake or stop ends the wait
		var t timer
		if head != nil {
			t = p.clock.NewTimer(head.deadline.Sub(p.clock.Now()))
			due = t.C()
		}
		select {
		case <-p.wakeCh:
		case <-due:
		case <-p.stopCh:
			stopping = true
		}
		if t != nil {
			t.Stop()
		}
	}
}

package oomclassifier

import (
	"cmp"
	"context"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// This file is the hold path: per host, the parts of batches whose OOMs wait for their
// metrics, and the worker that releases them in order.

// maxHeldBatches bounds the host parts one logs side holds. When it is full, the oldest part is
// released early (classified with what the window has, noted in its evidence) and the caller
// waits only for that one forward, never for decision_wait: nothing is dropped, and an OTLP
// call is not held past its client's timeout.
const maxHeldBatches = 1024

// Why a held part left, the reason attribute of the released telemetry.
const (
	releaseCovered  = "covered"       // its OOMs' metrics arrived, or it waited only behind its host's earlier part
	releaseDue      = "decision_wait" // decision_wait passed first
	releaseFull     = "queue_full"    // released early to make room
	releaseShutdown = "shutdown"      // flushed by Shutdown
)

// queueFullNote is added to the evidence of an OOM classified early to make room.
const queueFullNote = "It was classified before decision_wait ended because the held queue was full; metrics of its moment may not all have arrived."

// heldBatch is the part of one incoming batch that belongs to one host.
type heldBatch struct {
	ctx      context.Context
	ld       plog.Logs
	ooms     []oomRecord
	host     string
	seq      uint64 // arrival order over all hosts
	deadline time.Time
}

// hostQueue is one host's held parts in arrival order. inflight counts parts the worker has
// taken and not yet forwarded: meanwhile the host still counts as holding, so that a later
// batch of it cannot overtake them.
type hostQueue struct {
	items    []*heldBatch
	inflight int
}

type release struct {
	b      *heldBatch
	reason string
}

// mustHold reports whether an OOM lacks the metrics of its moment.
func (p *logsProcessor) mustHold(ooms []oomRecord) bool {
	for _, o := range ooms {
		if !p.inst.store.Covered(o.host, o.at) {
			return true
		}
	}
	return false
}

// hostsToHold returns the hosts of ld whose part must wait: those with parts already held (so
// that each host's order is kept) and those with an OOM whose moment the window does not cover
// yet. nil means everything goes on at once. Called with p.mu held.
func (p *logsProcessor) hostsToHold(ld plog.Logs, ooms []oomRecord) map[string]bool {
	var hold map[string]bool
	add := func(h string) {
		if hold == nil {
			hold = make(map[string]bool)
		}
		hold[h] = true
	}
	for _, o := range ooms {
		if !hold[o.host] && !p.inst.store.Covered(o.host, o.at) {
			add(o.host)
		}
	}
	if len(p.hosts) > 0 {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			h := str(rls.At(i).Resource().Attributes(), resHostName)
			if _, held := p.hosts[h]; held && !hold[h] {
				add(h)
			}
		}
	}
	return hold
}

// splitHeld moves the resource logs of each held host out of ld into a batch of its own,
// keeping their order; what is left in ld goes on at once. hosts lists the parts in the order
// their hosts first appear. A batch of one held host is not split: whole says its part is ld.
func splitHeld(ld plog.Logs, hold map[string]bool) (parts map[string]plog.Logs, hosts []string, whole bool) {
	rls := ld.ResourceLogs()
	parts = make(map[string]plog.Logs, len(hold))
	if rls.Len() > 0 {
		first := str(rls.At(0).Resource().Attributes(), resHostName)
		one := hold[first]
		for i := 1; i < rls.Len() && one; i++ {
			one = str(rls.At(i).Resource().Attributes(), resHostName) == first
		}
		if one {
			parts[first] = ld
			return parts, []string{first}, true
		}
	}
	rls.RemoveIf(func(rl plog.ResourceLogs) bool {
		h := str(rl.Resource().Attributes(), resHostName)
		if !hold[h] {
			return false
		}
		part, ok := parts[h]
		if !ok {
			part = plog.NewLogs()
			parts[h] = part
			hosts = append(hosts, h)
		}
		rl.MoveTo(part.ResourceLogs().AppendEmpty())
		return true
	})
	return parts, hosts, false
}

// enqueue holds part for host, waiting for a slot when the queue is full (the worker then
// releases the oldest part at once). false means the worker has stopped: the caller forwards
// the part itself.
func (p *logsProcessor) enqueue(ctx context.Context, host string, part plog.Logs, ooms []oomRecord) bool {
	n := part.LogRecordCount() // before queueing: once queued, the worker may forward (and the next consumer change) it
	select {
	case p.slots <- struct{}{}:
	default:
		p.mu.Lock()
		p.waiting++
		p.mu.Unlock()
		p.wake()
		// Not bound to ctx: part of the batch may have gone on already, so giving up here
		// would make the sender retry (and duplicate) it. The wait is one forward.
		p.slots <- struct{}{}
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
	}
	p.mu.Lock()
	if !p.running { // the worker drained and stopped while we waited
		p.mu.Unlock()
		<-p.slots
		return false
	}
	q := p.hosts[host]
	if q == nil {
		q = new(hostQueue)
		p.hosts[host] = q
	}
	p.seq++
	p.held++
	// The caller's deadline must not cut the forwarding short, but its values (client
	// metadata) travel on.
	q.items = append(q.items, &heldBatch{ctx: context.WithoutCancel(ctx), ld: part, ooms: ooms, host: host,
		seq: p.seq, deadline: p.clock.Now().Add(p.wait)})
	p.mu.Unlock()
	p.inst.telemetry.Held.Add(ctx, int64(n))
	p.wake()
	return true
}

func (p *logsProcessor) wake() {
	select {
	case p.wakeCh <- struct{}{}:
	default:
	}
}

// worker forwards held parts, each host's in order: a head when its OOMs are covered or due,
// or has none; the oldest at once when a caller waits for room; everything when stopping.
func (p *logsProcessor) worker() {
	defer close(p.doneCh)
	stopping := false
	for {
		p.mu.Lock()
		if stopping && len(p.hosts) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		out, next := p.takeReleasable(stopping)
		p.mu.Unlock()
		if len(out) > 0 {
			p.forward(out)
			continue
		}
		var due <-chan time.Time // nil with nothing due: only a wake or stop ends the wait
		var t timer
		if !next.IsZero() {
			t = p.clock.NewTimer(next.Sub(p.clock.Now()))
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

// takeReleasable takes the parts to forward now, in arrival order, and returns the earliest
// deadline of those left. Called with p.mu held.
func (p *logsProcessor) takeReleasable(stopping bool) (out []release, next time.Time) {
	// p.held, not len(p.slots): a caller that has just taken a freed slot but not yet queued
	// its part must not cause a second early release.
	if !stopping && p.waiting > 0 && p.held >= cap(p.slots) {
		var oldest *hostQueue
		for _, q := range p.hosts {
			if len(q.items) > 0 && (oldest == nil || q.items[0].seq < oldest.items[0].seq) {
				oldest = q
			}
		}
		if oldest != nil {
			return []release{{p.pop(oldest), releaseFull}}, time.Time{}
		}
	}
	now := p.clock.Now()
	for _, q := range p.hosts {
		for len(q.items) > 0 {
			b := q.items[0]
			var reason string
			switch {
			case stopping:
				reason = releaseShutdown
			case !p.mustHold(b.ooms):
				reason = releaseCovered
			case !now.Before(b.deadline):
				reason = releaseDue
			}
			if reason == "" {
				if next.IsZero() || b.deadline.Before(next) {
					next = b.deadline
				}
				break
			}
			out = append(out, release{p.pop(q), reason})
		}
	}
	slices.SortFunc(out, func(a, b release) int { return cmp.Compare(a.b.seq, b.b.seq) })
	return out, next
}

// pop takes q's head, which stays counted as in flight until forward is done with it.
func (p *logsProcessor) pop(q *hostQueue) *heldBatch {
	b := q.items[0]
	q.items[0] = nil
	q.items = q.items[1:]
	q.inflight++
	return b
}

// forward classifies and forwards taken parts, then frees their slots.
func (p *logsProcessor) forward(out []release) {
	for _, r := range out {
		note := ""
		if r.reason == releaseFull {
			note = queueFullNote
		}
		p.classify(r.b.ctx, r.b.ooms, note)
		n := r.b.ld.LogRecordCount()
		if err := p.next.ConsumeLogs(r.b.ctx, r.b.ld); err != nil {
			p.inst.telemetry.ForwardErrors.Add(r.b.ctx, 1)
			p.inst.logger.Warn("Next consumer refused a held log batch", zap.String("host", r.b.host), zap.Error(err))
		}
		p.inst.telemetry.Released.Add(r.b.ctx, int64(n), metric.WithAttributes(attribute.String("reason", r.reason)))
		p.mu.Lock()
		q := p.hosts[r.b.host]
		q.inflight--
		p.held--
		if len(q.items) == 0 && q.inflight == 0 {
			delete(p.hosts, r.b.host)
		}
		p.mu.Unlock()
		<-p.slots
	}
}

package diagnose

import (
	"cmp"
	"slices"
	"time"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// retime checks the OOM's message against the GPU buf.snap matched at the record's timestamp
// (q.At). The message states the failing process's bytes and the GPU's free memory at the
// failure; when the window's figures at the stamp contradict them (classify.Compare), the
// stamp is not the OOM's moment, most often a skewed log clock. retime then looks, among the
// collections of that GPU within thresholds.skew_search of the stamp, nearest first, for one
// where every figure compared at the stamp agrees. Found (and the GPU still matched there):
// buf.snap, q.At and oom.Time are that moment's, and note says so. Not found: buf.snap is the
// stamp's, note says why, and doubt asks the caller to lower the confidence.
//
// Only the window's figures are read: no rule runs twice, and an OOM whose figures agree at
// its stamp (the common case) costs one comparison.
//
// ownPID says that the message's process figure is about oom.PID's process: the message names
// no pid ("this process") or the pid the record was matched by. A figure about another pid
// says nothing of this process's bytes.
func retime(store *window.Store, th *classify.Thresholds, buf *buffer, q *window.Query, oom *classify.OOM, ownPID bool) (note string, doubt bool) {
	if th.SkewSearch <= 0 {
		return "", false
	}
	s := &buf.snap
	total := s.Total
	if total <= 0 {
		total = oom.TotalBytes
	}
	stamp := classify.Reading{ProcessBytes: -1, Free: s.Free}
	if ownPID {
		stamp.ProcessBytes = listedBytes(s.Processes, oom.PID)
	}
	figs, bad := classify.Compare(oom, total, stamp, th)
	if bad == 0 {
		return "", false
	}
	hwID, gpu := s.HWID, shortID(s.HWID)
	stampAt := q.At
	near := &buf.near
	if store.ReadingsTo(near, q.Host, hwID, oom.PID, stampAt.Add(-th.SkewSearch), stampAt.Add(th.SkewSearch)) {
		at := stampAt.UnixNano()
		buf.times = buf.times[:0]
		for _, p := range near.Free {
			buf.times = append(buf.times, p.T)
		}
		for _, p := range near.Process {
			buf.times = append(buf.times, p.T)
		}
		slices.SortFunc(buf.times, func(a, b int64) int {
			if c := cmp.Compare(abs64(a-at), abs64(b-at)); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		for _, t := range buf.times {
			r := classify.Reading{ProcessBytes: -1, Free: -1}
			if p, ok := window.Present(near.Process, t); ok {
				r.ProcessBytes = p.V
			}
			if p, ok := window.Present(near.Free, t); ok {
				r.Free = p.V
			}
			if c, b := classify.Compare(oom, total, r, th); c&figs != figs || b != 0 {
				continue
			}
			moved := *q
			moved.At = time.Unix(0, t)
			if store.SnapshotTo(&buf.snap, moved) && buf.snap.HWID == hwID {
				q.At, oom.Time = moved.At, moved.At
				return classify.SkewMoved(oom, gpu, figs, stamp, stampAt, moved.At), false
			}
			store.SnapshotTo(&buf.snap, *q) // there the OOM matched another GPU: keep the stamp's
			break
		}
	}
	return classify.SkewUnresolved(oom, gpu, figs, stamp, stampAt, th.SkewSearch), true
}

// listedBytes is the bytes of pid among the processes, -1 when it is not listed.
func listedBytes(ps []window.Process, pid int) int64 {
	if pid <= 0 {
		return -1
	}
	for i := range ps {
		if ps[i].PID == pid {
			return ps[i].Bytes
		}
	}
	return -1
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

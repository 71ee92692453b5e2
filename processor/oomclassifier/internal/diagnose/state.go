package diagnose

import (
	"slices"
	"sync"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// buffer holds what one classification copies out of the window and converts for the
// classifier. A full window is two 900-point series per OOM; pooling the arrays leaves the
// classification allocating only its sentences. Nothing of it outlives Run: the Outcome
// holds only strings, which are immutable and safe to keep.
type buffer struct {
	snap          window.Snapshot
	gpu           classify.GPUState
	usage, series []classify.Point
	procs         []classify.Process
	preds         []classify.Prediction
	near          window.Readings // the log clock check's points (skew.go)
	times         []int64
}

var bufs = sync.Pool{New: func() any { return new(buffer) }}

// ResetPool drops the pooled buffers, so that the next classifications start on fresh ones;
// tests use it to compare a pooled classification with a fresh one.
func ResetPool() { bufs = sync.Pool{New: func() any { return new(buffer) }} }

// GPUState converts a snapshot into the classifier's input on fresh buffers (tests compare
// it with what Run classifies on pooled ones).
func GPUState(snap *window.Snapshot) *classify.GPUState {
	b := &buffer{snap: *snap}
	return b.gpuState()
}

// gpuState converts b.snap into b.gpu. Allocations and Xids are the window's own
// (internal/gpustate) and are handed over as they are; points (integer bytes) become the
// classifier's, and so processes, whose series they hold.
func (b *buffer) gpuState() *classify.GPUState {
	s := &b.snap
	b.usage = classifyPoints(b.usage, s.Usage)
	b.procs = b.procs[:0]
	reused := false
	for _, p := range s.Processes {
		cp := classify.Process{
			PID: p.PID, Name: p.Name, ContainerID: p.ContainerID, PodUID: p.PodUID, Type: p.Type, Bytes: p.Bytes,
			PodName: p.PodName, Namespace: p.Namespace, Container: p.Container,
		}
		switch {
		case len(p.Series) == 0:
		case !reused: // the failing process: the window copies no other series
			b.series, reused = classifyPoints(b.series, p.Series), true
			cp.Series = b.series
		default: // should the window ever copy more, they must not share one array
			cp.Series = classifyPoints(nil, p.Series)
		}
		b.procs = append(b.procs, cp)
	}
	b.gpu = classify.GPUState{
		HWID: s.HWID, Name: s.Info.Name, MatchedBy: s.MatchedBy,
		Total: s.Total, Used: s.Used, Free: s.Free, Reserved: s.Reserved, Unattributed: s.Unattributed,
		SampleAge: s.SampleAge, Usage: nilIfEmpty(b.usage), Processes: nilIfEmpty(b.procs), Xids: nilIfEmpty(s.Xids),
		Allocations:  nilIfEmpty(s.Allocations),
		RetiredPages: s.RetiredPages, RetiredPagesPending: s.RetiredPagesPending,
		RemappedRows: s.RemappedRows, RemapFailed: s.RemapFailed, RemapPending: s.RemapPending,
		ProcessesHidden: s.ProcessesHidden,
	}
	return &b.gpu
}

// classifyPoints converts window points (integer bytes) into dst, reusing its array.
func classifyPoints(dst []classify.Point, ps []window.Point) []classify.Point {
	dst = slices.Grow(dst[:0], len(ps))[:len(ps)]
	for i, p := range ps {
		dst[i] = classify.Point{T: p.T, V: float64(p.V)}
	}
	return dst
}

// nilIfEmpty keeps the classifier's reading of an empty input: nil, "none known".
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

package oomclassifier

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file converts between the window's snapshot and the classifier, and writes the
// classification onto the record.

// classifyOOM classifies one OOM against the instance's window, with the receiver's forecasts
// as evidence, and writes the attributes.
func classifyOOM(o oomRecord, in *instance) classify.Result {
	store, th, preds := in.store, in.thresholds, in.predictions
	m := o.msg
	oom := classify.OOM{
		Framework: m.Framework, RequestedBytes: m.RequestedBytes, TotalBytes: m.TotalBytes,
		FreeBytes: m.FreeBytes, AllocatedBytes: m.AllocatedBytes, ReservedBytes: m.ReservedBytes,
		ProcessBytes: m.ProcessBytes, DeviceIndex: m.DeviceIndex, PID: o.pid, Time: o.at,
	}
	buf := classifyBufs.Get().(*classifyBuf)
	defer classifyBufs.Put(buf)
	var gpu *classify.GPUState
	q := window.Query{Host: o.host, At: o.at, PID: o.pid, DeviceIndex: m.DeviceIndex, Pod: o.pod}
	// An OOM of a device that is never an NVIDIA GPU (ROCm, XPU, MPS, …) is not looked up in
	// the NVML window at all: a GPU it matched there would be a wrong one (device_kind.go).
	nvidia := nvmlMatchable(o)
	matched := nvidia && store.SnapshotTo(&buf.snap, q)
	var skewNote string
	if matched {
		if fp := buf.snap.Match.FailingPID; fp > 0 && o.pod.Known() {
			oom.PID = fp // a pod's record gives no host pid (or an in-pod one): the window found it
		}
		var doubt bool
		skewNote, doubt = retime(store, &th, buf, &q, &oom, m.PID < 0 || m.PID == o.pid)
		gpu = buf.gpuState()
		gpu.MatchConfidence = matchConfidence(&buf.snap.Match, o.pod.Known())
		if doubt {
			gpu.MatchConfidence = classify.ConfidenceLow
		}
		if preds != nil {
			buf.preds = preds.forGPU(buf.preds[:0], o.host, gpu.HWID, q.At)
			gpu.Predictions = nilIfEmpty(buf.preds)
		}
	} else {
		oom.NoGPU = noGPU(o, in)
	}
	res := classify.Classify(oom, gpu, th)
	res.Evidence = withDeviceNote(res.Evidence, o)
	if nvidia {
		if note := matchNote(&buf.snap.Match, &o, gpu); note != "" {
			res.Evidence += " " + note
		}
	}
	if matched {
		if note := workloadNote(&buf.snap.Workload, &buf.snap.Match.Pod, m.ProcessBytes); note != "" {
			res.Evidence += " " + note
		}
		if note := siblingNote(&buf.snap); note != "" {
			res.Evidence += " " + note
		}
	}
	if o.timeNote != "" {
		res.Evidence += " " + o.timeNote
	}
	if skewNote != "" {
		res.Evidence += " " + skewNote
	}
	if o.stitchNote != "" {
		res.Evidence += " " + o.stitchNote
	}

	attrs := o.rec.Attributes()
	// Room for every attribute below at once: added one by one they regrew the map's array
	// four or five times per OOM.
	attrs.EnsureCapacity(attrs.Len() + maxWrittenPerOOM)
	putStr(attrs, attrFramework, m.Framework)
	for _, b := range [...]struct {
		key string
		v   int64
	}{
		{attrRequestedBytes, m.RequestedBytes}, {attrTotalBytes, m.TotalBytes}, {attrFreeBytes, m.FreeBytes},
		{attrAllocatedBytes, m.AllocatedBytes}, {attrReservedBytes, m.ReservedBytes},
		{attrProcessBytes, m.ProcessBytes}, {attrDeviceIndex, int64(m.DeviceIndex)},
	} {
		if b.v >= 0 {
			putInt(attrs, b.key, b.v)
		}
	}
	if _, set := attrs.Get(attrOtherProcesses); !set && len(m.OtherProcesses) > 0 {
		s := attrs.PutEmptySlice(attrOtherProcesses)
		for _, p := range m.OtherProcesses {
			e := s.AppendEmpty().SetEmptyMap()
			e.PutInt(attrProcessPID, int64(p.PID))
			e.PutInt(keyBytes, p.Bytes)
		}
	}
	putStr(attrs, attrCause, res.Cause)
	if _, set := attrs.Get(attrContributing); !set && len(res.Contributing) > 0 {
		s := attrs.PutEmptySlice(attrContributing)
		for _, c := range res.Contributing {
			s.AppendEmpty().SetStr(c)
		}
	}
	putStr(attrs, attrConfidence, res.Confidence)
	putStr(attrs, attrEvidence, res.Evidence)
	putStr(attrs, attrRecommendation, res.Recommendation)
	putStr(attrs, attrMatch, matchKind(gpu))
	if gpu != nil {
		putStr(attrs, attrHWID, gpu.HWID)
		if buf.snap.Info.Index >= 0 {
			putInt(attrs, attrGPUIndex, int64(buf.snap.Info.Index))
		}
		putStr(attrs, attrSlurmJob, buf.snap.SlurmJob)
		putStr(attrs, attrSlurmStep, buf.snap.SlurmStep)
	}
	return res
}

// maxWrittenPerOOM is how many attributes classifyOOM may add to a record: the framework,
// six byte counts and the ordinal, other_processes, cause, contributing causes, confidence,
// evidence, recommendation, match, hw.id, nvidia.gpu.index and the Slurm job and step.
const maxWrittenPerOOM = 19

// noGPU says why the window matched no GPU. Covered(host, t) is true when the host has a
// point at or after t, so it answers "any metrics at all", "any within the window" and
// "metrics more than the window after the OOM" (the window measures back from its newest).
func noGPU(o oomRecord, in *instance) classify.NoGPU {
	ng := classify.NoGPU{Host: o.host, Window: in.cfg.Window}
	switch {
	case !in.metricsSide.Load():
		ng.Reason = classify.NoGPUNoMetricsPipeline
	case !in.store.Covered(o.host, time.Unix(0, math.MinInt64)):
		ng.Reason = classify.NoGPUNoHostMetrics
	case !in.store.Covered(o.host, o.at.Add(-in.cfg.Window)):
		ng.Reason = classify.NoGPUMetricsTooOld
	case in.store.Covered(o.host, o.at.Add(in.cfg.Window)):
		ng.Reason = classify.NoGPUBeforeWindow
	default:
		ng.Reason = classify.NoGPUNotMatched
	}
	return ng
}

// classifyBuf holds what one classification copies out of the window and converts for the
// classifier. A full window is two 900-point series per OOM; pooling the arrays leaves the
// classification allocating only its sentences. Nothing of it outlives classifyOOM: the
// Result holds only strings, which are immutable and safe to keep.
type classifyBuf struct {
	snap          window.Snapshot
	gpu           classify.GPUState
	usage, series []classify.Point
	procs         []classify.Process
	preds         []classify.Prediction
	near          window.Readings // the log clock check's points (skew.go)
	times         []int64
}

var classifyBufs = sync.Pool{New: func() any { return new(classifyBuf) }}

// gpuState converts b.snap into b.gpu.
func (b *classifyBuf) gpuState() *classify.GPUState {
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

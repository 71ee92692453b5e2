package diagnose

import (
	"math"
	"time"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// Input is what the processor read off one OOM record.
type Input struct {
	OOM   classify.OOM // the message's figures; PID is the record's pid, Time its timestamp
	Query window.Query // the window query at the record's timestamp
	// Pod says the record names a pod; OwnPID that the message's process figure is about
	// OOM.PID's process (the message names no pid, or the record's).
	Pod, OwnPID bool
	// NVIDIA is false for a device that is never an NVIDIA GPU (ROCm, XPU, MPS, …): such an
	// OOM is not looked up in the NVML window at all, a GPU it matched there would be a wrong
	// one. DeviceNote is then the sentence saying why.
	NVIDIA     bool
	DeviceNote string
	// MetricsSide says the processor sits in a metrics pipeline; Window is the window's length.
	// Both explain a failed match (noGPU).
	MetricsSide bool
	Window      time.Duration
	// TimeNote and StitchNote are the record's own evidence sentences (the timestamp check,
	// the stitched message), appended in their place.
	TimeNote, StitchNote string
}

// Predictions gives the receiver's forecasts for a GPU made within the window before at.
type Predictions interface {
	ForGPU(dst []classify.Prediction, host, hwID string, at time.Time) []classify.Prediction
}

// Outcome is the classification and what of the matched GPU the record carries. It holds
// only strings and numbers: nothing of the pooled buffers outlives Run.
type Outcome struct {
	Result classify.Result
	Match  string // gpu.oom.match
	// Matched says a GPU was matched; HWID, GPUIndex (-1 unknown), SlurmJob and SlurmStep
	// are then that GPU's.
	Matched             bool
	HWID                string
	GPUIndex            int
	SlurmJob, SlurmStep string
}

// Run classifies the OOM against the store. preds may be nil (no forecasts kept).
func Run(store *window.Store, th classify.Thresholds, preds Predictions, in Input) Outcome {
	oom, q := in.OOM, in.Query
	buf := bufs.Get().(*buffer)
	defer bufs.Put(buf)
	var gpu *classify.GPUState
	matched := in.NVIDIA && store.SnapshotTo(&buf.snap, q)
	var skewNote string
	if matched {
		if fp := buf.snap.Match.FailingPID; fp > 0 && in.Pod {
			oom.PID = fp // a pod's record gives no host pid (or an in-pod one): the window found it
		}
		var doubt bool
		skewNote, doubt = retime(store, &th, buf, &q, &oom, in.OwnPID)
		gpu = buf.gpuState()
		gpu.MatchConfidence = matchConfidence(&buf.snap.Match, in.Pod)
		if doubt {
			gpu.MatchConfidence = classify.ConfidenceLow
		}
		if preds != nil {
			buf.preds = preds.ForGPU(buf.preds[:0], q.Host, gpu.HWID, q.At)
			gpu.Predictions = nilIfEmpty(buf.preds)
		}
	} else {
		oom.NoGPU = noGPU(store, &in)
	}
	res := classify.Classify(oom, gpu, th)
	if in.DeviceNote != "" {
		if res.Evidence == "" {
			res.Evidence = in.DeviceNote
		} else {
			res.Evidence += " " + in.DeviceNote
		}
	}
	if in.NVIDIA {
		if note := matchNote(&buf.snap.Match, &in, gpu); note != "" {
			res.Evidence += " " + note
		}
	}
	if matched {
		if note := workloadNote(&buf.snap.Workload, &buf.snap.Match.Pod, in.OOM.ProcessBytes); note != "" {
			res.Evidence += " " + note
		}
		if note := siblingNote(&buf.snap); note != "" {
			res.Evidence += " " + note
		}
	}
	for _, note := range [...]string{in.TimeNote, skewNote, in.StitchNote} {
		if note != "" {
			res.Evidence += " " + note
		}
	}
	out := Outcome{Result: res, Match: matchKind(gpu), Matched: gpu != nil, GPUIndex: -1}
	if gpu != nil {
		out.HWID, out.GPUIndex = gpu.HWID, buf.snap.Info.Index
		out.SlurmJob, out.SlurmStep = buf.snap.SlurmJob, buf.snap.SlurmStep
	}
	return out
}

// noGPU says why the window matched no GPU. Covered(host, t) is true when the host has a
// point at or after t, so it answers "any metrics at all", "any within the window" and
// "metrics more than the window after the OOM" (the window measures back from its newest).
func noGPU(store *window.Store, in *Input) classify.NoGPU {
	host, at := in.Query.Host, in.Query.At
	ng := classify.NoGPU{Host: host, Window: in.Window}
	switch {
	case !in.MetricsSide:
		ng.Reason = classify.NoGPUNoMetricsPipeline
	case !store.Covered(host, time.Unix(0, math.MinInt64)):
		ng.Reason = classify.NoGPUNoHostMetrics
	case !store.Covered(host, at.Add(-in.Window)):
		ng.Reason = classify.NoGPUMetricsTooOld
	case store.Covered(host, at.Add(in.Window)):
		ng.Reason = classify.NoGPUBeforeWindow
	default:
		ng.Reason = classify.NoGPUNotMatched
	}
	return ng
}

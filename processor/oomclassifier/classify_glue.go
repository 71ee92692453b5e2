package oomclassifier

import (
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/diagnose"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file hands one OOM record to the diagnosis (internal/diagnose) and writes the
// classification onto the record.

// classifyOOM classifies one OOM against the instance's window, with the receiver's forecasts
// as evidence, and writes the attributes.
func classifyOOM(o oomRecord, in *instance) classify.Result {
	m := o.msg
	d := diagnose.Input{
		OOM: classify.OOM{
			Framework: m.Framework, RequestedBytes: m.RequestedBytes, TotalBytes: m.TotalBytes,
			FreeBytes: m.FreeBytes, AllocatedBytes: m.AllocatedBytes, ReservedBytes: m.ReservedBytes,
			ProcessBytes: m.ProcessBytes, DeviceIndex: m.DeviceIndex, PID: o.pid, Time: o.at,
		},
		Query:  window.Query{Host: o.host, At: o.at, PID: o.pid, DeviceIndex: m.DeviceIndex, Pod: o.pod},
		Pod:    o.pod.Known(),
		OwnPID: m.PID < 0 || m.PID == o.pid,
		// An OOM of a device that is never an NVIDIA GPU is not looked up in the NVML window
		// (device_kind.go).
		NVIDIA: nvmlMatchable(o), DeviceNote: deviceNote(o),
		MetricsSide: in.metricsSide.Load(), Window: in.cfg.Window,
		TimeNote: o.timeNote, StitchNote: o.stitchNote,
	}
	var preds diagnose.Predictions
	if in.predictions != nil {
		preds = in.predictions
	}
	out := diagnose.Run(in.store, in.thresholds, preds, d)
	res := out.Result

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
	putStr(attrs, attrMatch, out.Match)
	if out.Matched {
		putStr(attrs, attrHWID, out.HWID)
		if out.GPUIndex >= 0 {
			putInt(attrs, attrGPUIndex, int64(out.GPUIndex))
		}
		putStr(attrs, attrSlurmJob, out.SlurmJob)
		putStr(attrs, attrSlurmStep, out.SlurmStep)
	}
	return res
}

// maxWrittenPerOOM is how many attributes classifyOOM may add to a record: the framework,
// six byte counts and the ordinal, other_processes, cause, contributing causes, confidence,
// evidence, recommendation, match, hw.id, nvidia.gpu.index and the Slurm job and step.
const maxWrittenPerOOM = 19

package oomclassifier

import "github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/parse"

// This file carries the message's device kind (gpu.oom.device.kind) onto the record and keeps
// OOMs of devices that are never NVIDIA GPUs (ROCm, XPU, MPS, Metal, NPU, TPU) away from the
// NVML window. Kind host is pinned host memory allocated through a GPU API (cudaMallocHost and
// the like): the host's RAM, never matched to a GPU and never counted as a GPU OOM.

// gpuOOM reports whether the record is a GPU's OOM: false for pinned host memory, which the
// processor's OOM count (otelcol_processor_oom_classifier_ooms) leaves out.
func gpuOOM(o oomRecord) bool { return o.msg.DeviceKind != parse.DeviceHost }

// putDeviceKind writes gpu.oom.device.kind on the OOM's record.
func putDeviceKind(o oomRecord) {
	putStr(o.rec.Attributes(), attrDeviceKind, o.msg.DeviceKind)
}

// nvmlMatchable reports whether the OOM may be matched to an NVML GPU: false when the message
// names a device kind that is never an NVIDIA GPU. Read by classify_glue.go for the diagnosis.
func nvmlMatchable(o oomRecord) bool {
	return !o.msg.NonNVIDIA()
}

// deviceNote is, for an OOM not matchable to an NVML GPU, the evidence sentence saying why;
// "" for others. The diagnosis appends it after the classifier's evidence.
func deviceNote(o oomRecord) string {
	if nvmlMatchable(o) {
		return ""
	}
	if o.msg.DeviceKind == parse.DeviceHost {
		return "The failed allocation is pinned host memory (" + attrDeviceKind + " host), the host's RAM, not a GPU's: it was not matched to an NVML GPU."
	}
	return "The message names a " + o.msg.DeviceKind + " device (" + attrDeviceKind + "), not an NVIDIA GPU: it was not matched to an NVML GPU."
}

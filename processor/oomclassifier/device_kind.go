package oomclassifier

// This file carries the message's device kind (gpu.oom.device.kind) onto the record and keeps
// OOMs of devices that are never NVIDIA GPUs (ROCm, XPU, MPS, Metal, NPU, TPU) away from the
// NVML window.

// putDeviceKind writes gpu.oom.device.kind on the OOM's record.
func putDeviceKind(o oomRecord) {
	putStr(o.rec.Attributes(), attrDeviceKind, o.msg.DeviceKind)
}

// nvmlMatchable reports whether the OOM may be matched to an NVML GPU: false when the message
// names a device kind that is never an NVIDIA GPU. Hook for classify_glue.go's window query.
func nvmlMatchable(o oomRecord) bool {
	return !o.msg.NonNVIDIA()
}

// withDeviceNote appends, for an OOM not matchable to an NVML GPU, the sentence saying why to
// the evidence. Hook for classify_glue.go, after classify.Classify.
func withDeviceNote(evidence string, o oomRecord) string {
	if nvmlMatchable(o) {
		return evidence
	}
	note := "The message names a " + o.msg.DeviceKind + " device (" + attrDeviceKind + "), not an NVIDIA GPU: it was not matched to an NVML GPU."
	if evidence == "" {
		return note
	}
	return evidence + " " + note
}

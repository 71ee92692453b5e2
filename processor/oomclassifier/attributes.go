package oomclassifier

// Attributes the processor writes on log records: documentation.md and metadata.yaml are the
// contract, and these names change only together with them.
const (
	attrFramework      = "gpu.oom.framework"
	attrDeviceKind     = "gpu.oom.device.kind"
	attrRequestedBytes = "gpu.oom.requested_bytes"
	attrTotalBytes     = "gpu.oom.total_bytes"
	attrFreeBytes      = "gpu.oom.free_bytes"
	attrAllocatedBytes = "gpu.oom.allocated_bytes"
	attrReservedBytes  = "gpu.oom.reserved_bytes"
	attrProcessBytes   = "gpu.oom.process_bytes"
	attrDeviceIndex    = "gpu.oom.device_index"
	attrOtherProcesses = "gpu.oom.other_processes"
	attrCause          = "gpu.oom.cause"
	attrContributing   = "gpu.oom.contributing_causes"
	attrConfidence     = "gpu.oom.confidence"
	attrEvidence       = "gpu.oom.evidence"
	attrRecommendation = "gpu.oom.recommendation"
	attrMatch          = "gpu.oom.match"
	attrHWID           = "hw.id"
	attrGPUIndex       = "nvidia.gpu.index"

	attrXid            = "nvidia.gpu.xid"
	attrXidDescription = "nvidia.gpu.xid.description"
	attrXidOrigin      = "nvidia.gpu.xid.origin"
	attrXidMnemonic    = "nvidia.gpu.xid.mnemonic"
	attrXidAction      = "nvidia.gpu.xid.action"
	attrPCIBusID       = "nvidia.gpu.pci.bus_id"
	attrProcessPID     = "process.pid"
	attrProcessName    = "process.executable.name"

	// keyBytes is the byte count inside each gpu.oom.other_processes entry, beside process.pid.
	keyBytes = "bytes"
)

// writtenAttributes lists every attribute the processor may add, for the documentation test.
var writtenAttributes = []string{
	attrFramework, attrDeviceKind, attrRequestedBytes, attrTotalBytes, attrFreeBytes, attrAllocatedBytes,
	attrReservedBytes, attrProcessBytes, attrDeviceIndex, attrOtherProcesses, attrCause,
	attrContributing, attrConfidence, attrEvidence, attrRecommendation, attrMatch, attrHWID, attrGPUIndex,
	attrSlurmJob, attrSlurmStep,
	attrXid, attrXidDescription, attrXidOrigin, attrXidMnemonic, attrXidAction, attrPCIBusID, attrProcessPID, attrProcessName,
}

// Names read from metrics and records (docs/metrics.md); the processor depends on these alone.
const (
	resHostName = "host.name"
	resHWName   = "hw.name"
	resHWModel  = "hw.model"
	resGPUIndex = attrGPUIndex

	metricUsage        = "hw.gpu.memory.usage"
	metricLimit        = "hw.gpu.memory.limit"
	metricFree         = "nvidia.gpu.memory.free"
	metricReserved     = "nvidia.gpu.memory.reserved"
	metricUnattributed = "nvidia.gpu.memory.unattributed"
	metricProcess      = "nvidia.gpu.process.memory.usage"
	metricRetired      = "nvidia.gpu.memory.retired_pages"
	metricRetiredPend  = "nvidia.gpu.memory.retired_pages.pending"
	metricRemapped     = "nvidia.gpu.memory.remapped_rows"
	metricRemapPending = "nvidia.gpu.memory.remapped_rows.pending"
	metricRemapFailed  = "nvidia.gpu.memory.remapped_rows.failed"
	metricHidden       = "nvidia.gpu.process.hidden"
	metricAllocation   = "nvidia.gpu.allocation"

	attrContainerID   = "container.id"
	attrPodUID        = "k8s.pod.uid"
	attrPodName       = "k8s.pod.name"
	attrNamespace     = "k8s.namespace.name"
	attrContainerName = "k8s.container.name"
	attrProcessVPID   = "process.vpid"
	attrAllocResource = "nvidia.gpu.allocation.resource"
	attrAllocDeviceID = "nvidia.gpu.allocation.device_id"
	attrProcessType   = "nvidia.gpu.process.type"
	attrSlurmJob      = "slurm.job.id"
	attrSlurmStep     = "slurm.job.step"
	attrRetireCause   = "nvidia.gpu.retirement.cause"
	attrRemapType     = "nvidia.gpu.remap.type"
	attrEventName     = "event.name"
	eventXid          = "nvidia.gpu.xid"
	attrExceptionMsg  = "exception.message"
	attrExceptionType = "exception.type"
	attrExceptionST   = "exception.stacktrace"
)

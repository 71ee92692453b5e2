package metadata

// Data point attribute names, as metadata.yaml declares them under `attributes`.
const (
	AttrProcessPID               = "process.pid"
	AttrProcessVPID              = "process.vpid"
	AttrProcessExecutableName    = "process.executable.name"
	AttrNvidiaGpuProcessType     = "nvidia.gpu.process.type"
	AttrContainerID              = "container.id"
	AttrK8sPodUID                = "k8s.pod.uid"
	AttrSlurmJobID               = "slurm.job.id"
	AttrSlurmJobStep             = "slurm.job.step"
	AttrHwGpuTask                = "hw.gpu.task"
	AttrNvidiaGpuRetirementCause = "nvidia.gpu.retirement.cause"
	AttrNvidiaGpuRemapType       = "nvidia.gpu.remap.type"
	AttrHwType                   = "hw.type"
	AttrErrorType                = "error.type"
	AttrNvidiaGpuXid             = "nvidia.gpu.xid"
	AttrHwState                  = "hw.state"
	AttrNvidiaGpuComputeMode     = "nvidia.gpu.compute_mode"
	AttrK8sPodName               = "k8s.pod.name"
	AttrK8sNamespaceName         = "k8s.namespace.name"
	AttrK8sContainerName         = "k8s.container.name"

	AttrNvidiaGpuAllocationResource      = "nvidia.gpu.allocation.resource"
	AttrNvidiaGpuAllocationDeviceID      = "nvidia.gpu.allocation.device_id"
	AttrNvidiaGpuAllocationClaimName     = "nvidia.gpu.allocation.claim.name"
	AttrNvidiaGpuAllocationClaimNS       = "nvidia.gpu.allocation.claim.namespace"
	AttrNvidiaGpuAllocationDraDriver     = "nvidia.gpu.allocation.dra.driver"
	AttrNvidiaGpuAllocationDraPool       = "nvidia.gpu.allocation.dra.pool"
	AttrNvidiaGpuAllocationDraDevice     = "nvidia.gpu.allocation.dra.device"
	AttrNvidiaGpuProcessUnexpectedReason = "nvidia.gpu.process.unexpected.reason"
	AttrNvidiaGpuReadingReason           = "nvidia.gpu.reading.reason"
)

// Enum values of the data point attributes above.
const (
	AttrNvidiaGpuProcessTypeCompute  = "compute"
	AttrNvidiaGpuProcessTypeGraphics = "graphics"

	AttrHwGpuTaskGeneral          = "general"
	AttrHwGpuTaskMemoryController = "memory_controller"

	AttrNvidiaGpuRetirementCauseSingleBitEcc = "single_bit_ecc"
	AttrNvidiaGpuRetirementCauseDoubleBitEcc = "double_bit_ecc"

	AttrNvidiaGpuRemapTypeCorrectable   = "correctable"
	AttrNvidiaGpuRemapTypeUncorrectable = "uncorrectable"

	AttrErrorTypeCorrected   = "corrected"
	AttrErrorTypeUncorrected = "uncorrected"

	AttrHwStateOk                            = "ok"
	AttrHwStateDegraded                      = "degraded"
	AttrHwStateFailed                        = "failed"
	AttrNvidiaGpuComputeModeDefault          = "default"
	AttrNvidiaGpuComputeModeExclusiveProcess = "exclusive_process"
	AttrNvidiaGpuComputeModeProhibited       = "prohibited"

	AttrNvidiaGpuProcessUnexpectedReasonOtherPod = "other_pod"
	AttrNvidiaGpuProcessUnexpectedReasonNoPod    = "no_pod"
	// AttrNvidiaGpuProcessUnexpectedReasonAllocationUnresolved: the process's pod holds a GPU
	// the kubelet names by minor number (DRA, GKE) that no device of this node matched.
	AttrNvidiaGpuProcessUnexpectedReasonAllocationUnresolved = "allocation_unresolved"

	AttrNvidiaGpuReadingReasonMemoryMismatch   = "memory_mismatch"
	AttrNvidiaGpuReadingReasonMemoryImpossible = "memory_impossible"
	AttrNvidiaGpuReadingReasonProcessPIDZero   = "process_pid_zero"
	AttrNvidiaGpuReadingReasonProcessOverLimit = "process_over_limit"
	AttrNvidiaGpuReadingReasonProcessDuplicate = "process_duplicate"

	// AttrHwTypeGpu is the one value of hw.type, on data points and resources alike.
	AttrHwTypeGpu = "gpu"
	// ResHwVendorNvidia is the one value of the hw.vendor resource attribute.
	ResHwVendorNvidia = "nvidia"
)

// AttributeDef is one data point attribute: its name, type and, for an enum, its values.
type AttributeDef struct {
	Name string
	Type string // string or int
	Enum []string
}

// Attributes lists the data point attributes as metadata.yaml declares them;
// TestMetadataInStep keeps the two in step.
var Attributes = []AttributeDef{
	{Name: AttrProcessPID, Type: "int"},
	{Name: AttrProcessVPID, Type: "int"},
	{Name: AttrProcessExecutableName, Type: "string"},
	{Name: AttrNvidiaGpuProcessType, Type: "string", Enum: []string{AttrNvidiaGpuProcessTypeCompute, AttrNvidiaGpuProcessTypeGraphics}},
	{Name: AttrContainerID, Type: "string"},
	{Name: AttrK8sPodUID, Type: "string"},
	{Name: AttrSlurmJobID, Type: "string"},
	{Name: AttrSlurmJobStep, Type: "string"},
	{Name: AttrHwGpuTask, Type: "string", Enum: []string{AttrHwGpuTaskGeneral, AttrHwGpuTaskMemoryController}},
	{Name: AttrNvidiaGpuRetirementCause, Type: "string", Enum: []string{AttrNvidiaGpuRetirementCauseSingleBitEcc, AttrNvidiaGpuRetirementCauseDoubleBitEcc}},
	{Name: AttrNvidiaGpuRemapType, Type: "string", Enum: []string{AttrNvidiaGpuRemapTypeCorrectable, AttrNvidiaGpuRemapTypeUncorrectable}},
	{Name: AttrHwType, Type: "string"},
	{Name: AttrErrorType, Type: "string", Enum: []string{AttrErrorTypeCorrected, AttrErrorTypeUncorrected}},
	{Name: AttrNvidiaGpuXid, Type: "int"},
	{Name: AttrHwState, Type: "string", Enum: []string{AttrHwStateOk, AttrHwStateDegraded, AttrHwStateFailed}},
	{Name: AttrNvidiaGpuComputeMode, Type: "string", Enum: []string{AttrNvidiaGpuComputeModeDefault, AttrNvidiaGpuComputeModeExclusiveProcess, AttrNvidiaGpuComputeModeProhibited}},
	{Name: AttrK8sPodName, Type: "string"},
	{Name: AttrK8sNamespaceName, Type: "string"},
	{Name: AttrK8sContainerName, Type: "string"},
	{Name: AttrNvidiaGpuAllocationResource, Type: "string"},
	{Name: AttrNvidiaGpuAllocationDeviceID, Type: "string"},
	{Name: AttrNvidiaGpuAllocationClaimName, Type: "string"},
	{Name: AttrNvidiaGpuAllocationClaimNS, Type: "string"},
	{Name: AttrNvidiaGpuAllocationDraDriver, Type: "string"},
	{Name: AttrNvidiaGpuAllocationDraPool, Type: "string"},
	{Name: AttrNvidiaGpuAllocationDraDevice, Type: "string"},
	{Name: AttrNvidiaGpuProcessUnexpectedReason, Type: "string", Enum: []string{AttrNvidiaGpuProcessUnexpectedReasonOtherPod,
		AttrNvidiaGpuProcessUnexpectedReasonNoPod, AttrNvidiaGpuProcessUnexpectedReasonAllocationUnresolved}},
	{Name: AttrNvidiaGpuReadingReason, Type: "string", Enum: []string{AttrNvidiaGpuReadingReasonMemoryMismatch,
		AttrNvidiaGpuReadingReasonMemoryImpossible, AttrNvidiaGpuReadingReasonProcessPIDZero,
		AttrNvidiaGpuReadingReasonProcessOverLimit, AttrNvidiaGpuReadingReasonProcessDuplicate}},
}

// Attributes of the Xid log records (not metric attributes, so not in metadata.yaml's
// `attributes`; the README's Xid table documents them).
const (
	LogAttrEventName             = "event.name"
	LogEventNameXid              = "nvidia.gpu.xid"
	LogAttrXid                   = AttrNvidiaGpuXid
	LogAttrXidDescription        = "nvidia.gpu.xid.description"
	LogAttrXidOrigin             = "nvidia.gpu.xid.origin"
	LogAttrXidSource             = "nvidia.gpu.xid.source"
	LogAttrXidMnemonic           = "nvidia.gpu.xid.mnemonic"
	LogAttrXidAction             = "nvidia.gpu.xid.action"
	LogAttrPciBusID              = "nvidia.gpu.pci.bus_id"
	LogAttrProcessPID            = AttrProcessPID
	LogAttrProcessExecutableName = AttrProcessExecutableName

	// Values of nvidia.gpu.xid.source: which of the driver's two reports saw the Xid.
	LogXidSourceNVML = "nvml"
	LogXidSourceKmsg = "kmsg"
	LogXidSourceBoth = "both"
)

// Attributes of the predicted-OOM log records (documentation.md, "Memory runway"): one per
// episode of a runway below runway.warn_below. Process attributes are those of
// nvidia.gpu.process.memory.usage.
const (
	LogEventNameOOMPredicted = "nvidia.gpu.memory.oom_predicted"
	// LogAttrRunway is the runway in seconds (double), as the metric of the same name.
	LogAttrRunway = "nvidia.gpu.memory.runway"
	// LogAttrGrowth is the GPU's (or MIG instance's) usage growth rate in bytes per second.
	LogAttrGrowth = "nvidia.gpu.memory.growth"
	// LogAttrProcessGrowth is the growing process's own rate in bytes per second.
	LogAttrProcessGrowth = "nvidia.gpu.process.memory.growth"
)

// Attributes of the unexpected-consumer log records (documentation.md, "Kubernetes"): one per
// episode of a process holding memory on a GPU the kubelet did not place it on. The consumer's
// process attributes are those of nvidia.gpu.process.memory.usage.
const (
	LogEventNameProcessUnexpected = "nvidia.gpu.process.unexpected"
	// LogAttrProcessMemory is the consumer's memory on the GPU in bytes (int).
	LogAttrProcessMemory = "nvidia.gpu.process.memory.usage"
	// The pods the kubelet allocated the GPU to (string slices, one entry per pod; empty when
	// the GPU is allocated to none).
	LogAttrAllocatedPodName       = "nvidia.gpu.allocated.k8s.pod.name"
	LogAttrAllocatedNamespaceName = "nvidia.gpu.allocated.k8s.namespace.name"
	LogAttrAllocatedPodUID        = "nvidia.gpu.allocated.k8s.pod.uid"
)

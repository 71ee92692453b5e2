package metadata

// MetricType is the pdata shape of a metric.
type MetricType int

const (
	Gauge MetricType = iota
	Sum
)

// ValueType is the number type of a metric's data points.
type ValueType int

const (
	Int ValueType = iota
	Double
)

// MetricID indexes Metrics.
type MetricID int

// The receiver's metrics. The order is the order of Metrics below.
const (
	HwGpuMemoryUsage MetricID = iota
	HwGpuMemoryLimit
	HwGpuMemoryUtilization
	NvidiaGpuMemoryFree
	NvidiaGpuMemoryReserved
	NvidiaGpuMemoryUnattributed
	NvidiaGpuProcessMemoryUsage
	NvidiaGpuProcessCount
	HwGpuUtilization
	NvidiaGpuMemoryRetiredPages
	NvidiaGpuMemoryRetiredPagesPending
	NvidiaGpuMemoryRemappedRows
	NvidiaGpuMemoryRemappedRowsPending
	NvidiaGpuMemoryRemappedRowsFailed
	NvidiaGpuEccMode
	HwErrors
	NvidiaGpuXidErrors
	NvidiaGpuMemoryRunway
	NvidiaGpuProcessMemoryGrowth
	HwStatus
	NvidiaGpuProcessUtilization
	NvidiaGpuPersistenceMode
	NvidiaGpuComputeMode
	NvidiaGpuAllocation
	NvidiaGpuAllocationIdleTime
	NvidiaGpuProcessUnexpectedCount
	NvidiaGpuProcessHidden
	NvidiaGpuReadingsRejected
	NvidiaGpuAllocationAge
	metricCount
)

// MetricDef describes one metric as metadata.yaml does.
type MetricDef struct {
	Name        string
	Description string
	Unit        string
	Type        MetricType
	Value       ValueType
	Monotonic   bool // sums only
	Attributes  []string
	Enabled     bool // default
	// Points is how many data points one resource usually has (one per attribute value),
	// so the slice is sized once; 0 means one.
	Points int
}

// Metrics is the receiver's metric table, indexed by MetricID.
var Metrics = [metricCount]MetricDef{
	HwGpuMemoryUsage: {Name: "hw.gpu.memory.usage", Unit: "By", Type: Sum, Enabled: true,
		Description: "Framebuffer memory in use, excluding the driver's reserve (NVML memory info v2 used; with v1, total - free)."},
	HwGpuMemoryLimit: {Name: "hw.gpu.memory.limit", Unit: "By", Type: Sum, Enabled: true,
		Description: "Framebuffer memory in total."},
	HwGpuMemoryUtilization: {Name: "hw.gpu.memory.utilization", Unit: "1", Type: Gauge, Value: Double, Enabled: true,
		Description: "Fraction of the framebuffer in use: usage / limit."},
	NvidiaGpuMemoryFree: {Name: "nvidia.gpu.memory.free", Unit: "By", Type: Sum, Enabled: true,
		Description: "Framebuffer memory free for allocation."},
	NvidiaGpuMemoryReserved: {Name: "nvidia.gpu.memory.reserved", Unit: "By", Type: Sum, Enabled: true,
		Description: "Framebuffer memory reserved by the driver and firmware (NVML memory info v2 only)."},
	NvidiaGpuMemoryUnattributed: {Name: "nvidia.gpu.memory.unattributed", Unit: "By", Type: Sum, Enabled: true,
		Description: "Memory in use that no listed process accounts for: total - free - reserved - sum of per-process memory, floored at 0."},
	NvidiaGpuProcessMemoryUsage: {Name: "nvidia.gpu.process.memory.usage", Unit: "By", Type: Sum, Enabled: true,
		Attributes:  []string{AttrProcessPID, AttrProcessVPID, AttrProcessExecutableName, AttrNvidiaGpuProcessType, AttrContainerID, AttrK8sPodUID, AttrK8sPodName, AttrK8sNamespaceName, AttrK8sContainerName, AttrSlurmJobID, AttrSlurmJobStep},
		Description: "Framebuffer memory used by one process. On a GPU in MIG mode processes are reported on the MIG instance they run in."},
	NvidiaGpuProcessCount: {Name: "nvidia.gpu.process.count", Unit: "{process}", Type: Sum, Enabled: true, Points: 2,
		Attributes:  []string{AttrNvidiaGpuProcessType},
		Description: "Processes holding a context on the GPU (on a GPU in MIG mode, on each MIG instance)."},
	HwGpuUtilization: {Name: "hw.gpu.utilization", Unit: "1", Type: Gauge, Value: Double, Enabled: true,
		Attributes:  []string{AttrHwGpuTask},
		Description: "Fraction of time over the past sample period during which one or more kernels ran."},
	NvidiaGpuMemoryRetiredPages: {Name: "nvidia.gpu.memory.retired_pages", Unit: "{page}", Type: Sum, Enabled: true, Points: 2,
		Attributes:  []string{AttrNvidiaGpuRetirementCause},
		Description: "Framebuffer pages retired by ECC (pre-Ampere page retirement)."},
	NvidiaGpuMemoryRetiredPagesPending: {Name: "nvidia.gpu.memory.retired_pages.pending", Unit: "{gpu}", Type: Gauge, Enabled: true,
		Description: "1 while a page retirement waits for a GPU reset."},
	NvidiaGpuMemoryRemappedRows: {Name: "nvidia.gpu.memory.remapped_rows", Unit: "{row}", Type: Sum, Enabled: true, Points: 2,
		Attributes:  []string{AttrNvidiaGpuRemapType},
		Description: "Framebuffer rows remapped (Ampere and later)."},
	NvidiaGpuMemoryRemappedRowsPending: {Name: "nvidia.gpu.memory.remapped_rows.pending", Unit: "{gpu}", Type: Gauge, Enabled: true,
		Description: "1 while a row remapping waits for a GPU reset."},
	NvidiaGpuMemoryRemappedRowsFailed: {Name: "nvidia.gpu.memory.remapped_rows.failed", Unit: "{gpu}", Type: Gauge, Enabled: true,
		Description: "1 when a row remapping failed: the GPU needs servicing."},
	NvidiaGpuEccMode: {Name: "nvidia.gpu.ecc.mode", Unit: "{gpu}", Type: Gauge, Enabled: true,
		Description: "1 when ECC is enabled (current mode)."},
	HwErrors: {Name: "hw.errors", Unit: "{error}", Type: Sum, Monotonic: true, Enabled: true, Points: 2,
		Attributes:  []string{AttrHwType, AttrErrorType},
		Description: "Volatile ECC memory error counts since the last driver reload."},
	NvidiaGpuXidErrors: {Name: "nvidia.gpu.xid.errors", Unit: "{error}", Type: Sum, Monotonic: true, Enabled: true,
		Attributes:  []string{AttrNvidiaGpuXid},
		Description: "Xid events seen since the receiver started."},
	NvidiaGpuMemoryRunway: {Name: "nvidia.gpu.memory.runway", Unit: "s", Type: Gauge, Value: Double, Enabled: true,
		Description: "Seconds until the framebuffer is full at the current steady growth (free / growth rate of usage). Absent while usage is not growing steadily, and on a GPU in MIG mode (each MIG instance has its own; see the runway section)."},
	NvidiaGpuProcessMemoryGrowth: {Name: "nvidia.gpu.process.memory.growth", Unit: "By/s", Type: Gauge, Value: Double, Enabled: true,
		Attributes:  []string{AttrProcessPID, AttrProcessVPID, AttrProcessExecutableName, AttrNvidiaGpuProcessType, AttrContainerID, AttrK8sPodUID, AttrK8sPodName, AttrK8sNamespaceName, AttrK8sContainerName, AttrSlurmJobID, AttrSlurmJobStep},
		Description: "Steady growth rate of one process's framebuffer memory. Absent while the process's memory is not growing steadily."},
	HwStatus: {Name: "hw.status", Unit: "1", Type: Sum, Enabled: true, Points: 3,
		Attributes:  []string{AttrHwType, AttrHwState},
		Description: "GPU state as semconv's hw.status: one point per hw.state, 1 for the current state. failed: the GPU is lost (GPU_IS_LOST or Xid 79); degraded: a page retirement or row remapping waits for a reset; ok otherwise."},
	NvidiaGpuProcessUtilization: {Name: "nvidia.gpu.process.utilization", Unit: "1", Type: Gauge, Value: Double, Enabled: true,
		Attributes:  []string{AttrProcessPID, AttrProcessVPID, AttrProcessExecutableName, AttrContainerID, AttrK8sPodUID, AttrK8sPodName, AttrK8sNamespaceName, AttrK8sContainerName, AttrSlurmJobID, AttrSlurmJobStep, AttrHwGpuTask},
		Description: "Fraction of the past sample period during which a process used the GPU's SMs (hw.gpu.task general) or its memory controller (memory_controller), as nvidia-smi pmon shows it. Only processes NVML sampled as busy since the previous scrape have points; not reported on a GPU in MIG mode."},
	NvidiaGpuPersistenceMode: {Name: "nvidia.gpu.persistence_mode", Unit: "{gpu}", Type: Gauge, Enabled: true,
		Description: "1 when persistence mode is on. With it off the driver tears the GPU's state down when the last client exits, and the next CUDA context pays for initialising it again."},
	NvidiaGpuComputeMode: {Name: "nvidia.gpu.compute_mode", Unit: "{gpu}", Type: Gauge, Enabled: true, Points: 3,
		Attributes:  []string{AttrNvidiaGpuComputeMode},
		Description: "The GPU's compute mode: one point per mode, 1 for the current one and 0 for the others."},
	NvidiaGpuAllocation: {Name: "nvidia.gpu.allocation", Unit: "{allocation}", Type: Gauge, Enabled: true,
		Attributes:  allocationAttributes,
		Description: "1 for each pod container the kubelet allocated the GPU (or MIG instance, or a time-sliced replica of it) to, from the kubelet's PodResources API. Absent without the PodResources socket."},
	NvidiaGpuAllocationIdleTime: {Name: "nvidia.gpu.allocation.idle_time", Unit: "s", Type: Gauge, Value: Double, Enabled: true,
		Attributes:  allocationAttributes,
		Description: "Seconds since a process of the allocated pod last held memory on the GPU (since the receiver first saw the allocation, when none has): a GPU reserved for a pod that does not use it."},
	NvidiaGpuProcessUnexpectedCount: {Name: "nvidia.gpu.process.unexpected.count", Unit: "{process}", Type: Sum, Enabled: true, Points: 3,
		Attributes:  []string{AttrNvidiaGpuProcessUnexpectedReason},
		Description: unexpectedCountDescription},
	NvidiaGpuProcessHidden: {Name: "nvidia.gpu.process.hidden", Unit: "{gpu}", Type: Gauge, Enabled: true,
		Description: "1 while NVML lists only the GPU processes of the collector's own PID namespace (an NVIDIA driver from 535.113.01 and a collector outside the host's PID namespace): processes of other pods are missing and nvidia.gpu.memory.unattributed is not emitted. Absent with the simulated backend."},
	NvidiaGpuReadingsRejected: {Name: "nvidia.gpu.readings.rejected", Unit: "{reading}", Type: Sum, Monotonic: true, Enabled: true,
		Attributes:  []string{AttrNvidiaGpuReadingReason},
		Description: readingsRejectedDescription},
	NvidiaGpuAllocationAge: {Name: "nvidia.gpu.allocation.age", Unit: "s", Type: Gauge, Value: Double, Enabled: true,
		Description: "Seconds since the kubelet's PodResources API last answered List: 0 to the refresh interval (10 s) while it answers; growing while it fails, when nvidia.gpu.allocation and the unexpected-consumer counts are the last good answer's. Emitted on each GPU and MIG instance once the API has answered."},
}

const readingsRejectedDescription = "NVML readings the receiver did not pass on as given since it started, by nvidia.gpu.reading.reason: memory_mismatch, used + free + reserved did not add up to total and used was recomputed from total and free; memory_impossible, no total or neither free nor used fits in it, and the memory metrics were left out of that scrape; process_pid_zero, process_over_limit (more memory than the device has) and process_duplicate (a pid listed twice with the same kind of context), processes left out. A reason's series starts with its first rejection."

// allocationAttributes identify one allocation of a device to a pod's container; the claim
// and dra attributes are present on allocations made through DRA only.
var allocationAttributes = []string{AttrK8sPodName, AttrK8sPodUID, AttrK8sNamespaceName, AttrK8sContainerName,
	AttrNvidiaGpuAllocationResource, AttrNvidiaGpuAllocationDeviceID,
	AttrNvidiaGpuAllocationClaimName, AttrNvidiaGpuAllocationClaimNS,
	AttrNvidiaGpuAllocationDraDriver, AttrNvidiaGpuAllocationDraPool, AttrNvidiaGpuAllocationDraDevice}

const unexpectedCountDescription = "Processes holding memory on the GPU that the kubelet did not place there: other_pod, a process of a pod the GPU is not allocated to; no_pod, a process outside any pod on a GPU allocated to a pod; allocation_unresolved, a process of a pod holding a GPU the kubelet names by minor number (DRA, GKE) that no device of this node matched, so whether it is expected cannot be told. Emitted only while PodResources answers."

// MetricByName returns the ID of a metric name.
func MetricByName(name string) (MetricID, bool) {
	for i := range Metrics {
		if Metrics[i].Name == name {
			return MetricID(i), true
		}
	}
	return 0, false
}

package classify

import (
	"time"

	"github.com/gpumem/otelcol-gpumem/internal/ramp"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/gpustate"
)

// Cause names, exactly as written to gpu.oom.cause (docs/causes.md). Dashboards depend on them.
const (
	CauseGPUFault              = "gpu_fault"
	CauseZombieContext         = "zombie_context"
	CauseOtherTenant           = "other_tenant"
	CauseWorkerContextOverhead = "worker_context_overhead"
	CauseFragmentation         = "fragmentation"
	CauseMemoryLeak            = "memory_leak"
	CauseCapacityLoss          = "capacity_loss"
	CauseWorkloadTooLarge      = "workload_too_large"
	CauseUnknown               = "unknown"
)

// Confidence values, as written to gpu.oom.confidence.
const (
	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// GPU match kinds, as set by the metric window in GPUState.MatchedBy and written to
// gpu.oom.match (documentation.md), in the order the window tries them.
const (
	MatchedByPID         = "pid"          // a host pid the window lists on that GPU
	MatchedByVPID        = "vpid"         // the record's pid read inside its pod (process.vpid)
	MatchedByPod         = "pod"          // the record's pod holds (or was allocated) only that GPU
	MatchedByContainer   = "container"    // as pod, found through container.id
	MatchedByPodOrdinal  = "pod_ordinal"  // the message's ordinal among the pod's GPUs, CUDA's order
	MatchedByOnlyGPU     = "only_gpu"     // the host's only GPU
	MatchedByNodeOrdinal = "node_ordinal" // the message's ordinal equals nvidia.gpu.index
	MatchedByNone        = "none"         // no GPU matched
)

// OOM is what the allocation-failure message said. Byte fields and indexes are -1 when the
// message did not state them.
type OOM struct {
	Framework      string
	RequestedBytes int64 // the failed allocation
	TotalBytes     int64 // capacity as the framework saw it
	FreeBytes      int64 // free memory as the framework saw it
	AllocatedBytes int64 // held by live tensors (allocator)
	ReservedBytes  int64 // held by the framework's allocator in total (allocated + cached)
	ProcessBytes   int64 // the failing process's total on the GPU, where stated
	DeviceIndex    int
	PID            int       // the failing process (message or record's process.pid), -1 unknown
	Time           time.Time // the OOM's timestamp

	// NoGPU says why no GPU was matched; read only when Classify gets a nil *GPUState.
	NoGPU NoGPU
}

// NoGPUReason is why the metric window matched the OOM to no GPU.
type NoGPUReason uint8

const (
	NoGPUUnstated          NoGPUReason = iota // the caller did not say
	NoGPUNoMetricsPipeline                    // the processor sits in no metrics pipeline
	NoGPUNoHostMetrics                        // no GPU metric of the record's host ever arrived
	NoGPUMetricsTooOld                        // the host's newest metrics are older than the window
	NoGPUNotMatched                           // recent metrics, but neither pid, only GPU nor ordinal chose one
	NoGPUBeforeWindow                         // the OOM is older than the window reaches back from the host's newest metrics
)

// NoGPU describes a failed match for the evidence.
type NoGPU struct {
	Reason NoGPUReason
	Host   string        // the record's host.name; "" when it has none
	Window time.Duration // the window's length, for NoGPUMetricsTooOld and NoGPUBeforeWindow
}

// Point is one sample of a time series: the shared ramp fit's point (Unix nanoseconds, value).
type Point = ramp.Point

// Process is one process holding memory on the GPU, as the per-process metric described it.
type Process struct {
	PID                             int
	Name, ContainerID, PodUID, Type string
	PodName, Namespace, Container   string  // k8s.pod.name, k8s.namespace.name, k8s.container.name
	Bytes                           int64   // at the OOM time (latest at or before it)
	Series                          []Point // its memory over the window, oldest first
}

// XidEvent is one Xid reported on the GPU within the window: the window's own Xid.
type XidEvent = gpustate.Xid

// GPUState is the metric window's view of the matched GPU at the OOM's timestamp.
// Classify accepts a nil *GPUState: no GPU could be matched.
type GPUState struct {
	HWID, Name string
	MatchedBy  string // one of the MatchedBy kinds
	// MatchConfidence is the most the match allows ("" no limit): medium when a pod's ordinal
	// was read among GPUs of different models, low when a pod's record fell through to the
	// node ordinal, which CUDA inside the pod does not use.
	MatchConfidence string

	// Latest sample at or before the OOM; -1 = unknown.
	Total, Used, Free, Reserved, Unattributed int64
	SampleAge                                 time.Duration // OOM time − time of that sample

	Usage     []Point // hw.gpu.memory.usage over the window, oldest first
	Processes []Process
	// ProcessesHidden: the driver hid processes of other PID namespaces from the collector
	// (nvidia.gpu.process.hidden), so Processes is not every process holding memory.
	ProcessesHidden bool

	RetiredPages        map[string]int64 // by cause: single_bit_ecc, double_bit_ecc (nil = unknown)
	RetiredPagesPending bool
	RemappedRows        map[string]int64 // correctable, uncorrectable (nil = unknown)
	RemapFailed         bool
	RemapPending        bool

	Xids []XidEvent // on this GPU, within the window

	// Allocations are the kubelet's allocations of this GPU at the OOM (nvidia.gpu.allocation);
	// nil when the window has none, which says nothing about whether it is allocated.
	Allocations []Allocation

	// Predictions are the gpu_mem receiver's predicted-OOM records for this GPU within the
	// window, oldest first: leak evidence (rule_prediction.go).
	Predictions []Prediction
}

// Allocation is one nvidia.gpu.allocation point: the kubelet allocated the GPU (a MIG
// instance, a time-sliced replica) to a container of a pod. The window's own Allocation.
type Allocation = gpustate.Allocation

// Prediction is one nvidia.gpu.memory.oom_predicted record: the receiver saw this GPU's
// memory grow steadily and forecast it full.
type Prediction struct {
	T           time.Time
	Runway      time.Duration
	Rate        float64 // the GPU's growth, bytes/s; 0 unknown
	PID         int     // the fastest-growing process; -1 unknown
	Name        string  // its executable name
	ProcessRate float64 // its own growth, bytes/s; 0 unknown
	// ContainerID and PodUID are the process's container.id and k8s.pod.uid, "" unknown: with
	// the pid they tell the process from a later one that reuses the pid (rule_prediction.go).
	ContainerID, PodUID string
}

// Result is the classification written onto the OOM record.
type Result struct {
	Cause          string
	Contributing   []string
	Confidence     string // ConfidenceHigh, ConfidenceMedium, ConfidenceLow
	Evidence       string // one human sentence with the numbers that decided it
	Recommendation string // the fix, one or two sentences
}

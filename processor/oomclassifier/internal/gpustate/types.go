package gpustate

import "time"

// Allocation is one nvidia.gpu.allocation point: the kubelet allocated this GPU (a MIG
// instance is its own resource, a time-sliced replica shares its GPU's) to a container of a pod.
type Allocation struct {
	PodUID    string // k8s.pod.uid
	PodName   string // k8s.pod.name
	Namespace string // k8s.namespace.name
	Container string // k8s.container.name
	DeviceID  string // nvidia.gpu.allocation.device_id: GPU-uuid, MIG-uuid, GPU-uuid::3
	Resource  string // nvidia.gpu.allocation.resource: nvidia.com/gpu, nvidia.com/mig-1g.10gb, …
}

// Xid is a driver Xid event kept as evidence. HWID is set when the record names the GPU;
// otherwise BusID (normalised by the caller) ties it to the GPU that reports that bus id.
type Xid struct {
	T           time.Time
	Code        int
	Fault       bool // the Xid catalog says it is an application or hardware fault
	Description string
	HWID        string
	BusID       string
}

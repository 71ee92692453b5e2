package podresources

import (
	"cmp"
	"slices"
	"strings"
	"time"

	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Allocation is one device the kubelet allocated to one container.
type Allocation struct {
	Namespace string
	Pod       string
	Container string
	// Resource is the extended resource name: nvidia.com/gpu, nvidia.com/mig-1g.10gb, …
	Resource string
	// DeviceID is the id as the kubelet lists it: GPU-…, MIG-…, GPU-…::3.
	DeviceID string
	// DeviceUUID is the NVML UUID DeviceID refers to (replica suffix
	// stripped); "" when the id is no GPU or MIG UUID.
	DeviceUUID string
	// Replica is the time-slicing/MPS replica number, -1 when none.
	Replica int
	// Ref is how the id names its device where it is no UUID (GKE's device
	// plugin, NVIDIA's DRA driver): by minor number. Resolve fills DeviceUUID
	// from it.
	Ref MinorRef
	// Claim is the DRA claim the device was allocated through; zero for a
	// device plugin's allocation.
	Claim Claim
}

// Claim is a DRA allocation's claim and the device as its driver names it
// (the kubelet's ContainerResources.dynamic_resources: DynamicResource and
// ClaimResource in k8s.io/kubelet pkg/apis/podresources/v1/api.proto).
type Claim struct {
	Name, Namespace string
	// Driver, Pool and Device are the triplet that identifies the device.
	Driver, Pool, Device string
}

// byMinor says whether the allocation's device is found through Resolve: a
// minor-number id, or any device of NVIDIA's DRA driver.
func (a *Allocation) byMinor() bool { return a.Ref.Valid() || a.Claim.Driver != "" }

// AllocatableDevice is one device the kubelet can allocate (GetAllocatableResources).
type AllocatableDevice struct {
	Resource   string
	DeviceID   string
	DeviceUUID string
}

type podKey struct{ ns, pod string }

type migKey struct {
	parent string
	gi, ci int
}

// Snapshot is one List (and GetAllocatableResources) answer, reduced to GPU
// devices and indexed for the scraper. It is immutable: slices it returns
// share its storage and must not be modified.
type Snapshot struct {
	taken       time.Time
	allocs      []Allocation // sorted by device, then pod and container
	byDevice    map[string][]Allocation
	byMIG       map[migKey][]Allocation
	byPod       map[podKey][]Allocation
	allocatable []AllocatableDevice
	hasAlloc    bool
	// byMinor says some allocation names its device by minor number (or is
	// DRA's): only such a snapshot needs Resolve.
	byMinor bool
	// raw is the snapshot Resolve was called on; nil on a raw snapshot.
	raw *Snapshot
	// unresolved are the allocations Resolve found no device for.
	unresolved []Allocation
	// dropped counts allocations past MaxDeviceAllocations on one device.
	dropped int
}

// MaxDeviceAllocations bounds the allocations one device holds in a snapshot, and so the
// points one List can add to a device's scrape. The kubelet gives each device plugin id to
// one container (the containers of one pod may share it), and a GPU has one id, or one per
// time-sliced replica (GKE allows 48 clients; NVIDIA's plugin a handful of replicas as
// configured): more than this on one device is no kubelet's answer for it.
const MaxDeviceAllocations = 128

// emptySnapshot is what a Source holds before its first good List.
var emptySnapshot = &Snapshot{}

// BuildSnapshot reduces the kubelet's answers to NVIDIA GPU allocations.
// alloc may be nil (an old kubelet without GetAllocatableResources).
func BuildSnapshot(list *podresourcesv1.ListPodResourcesResponse, alloc *podresourcesv1.AllocatableResourcesResponse, taken time.Time) *Snapshot {
	s := &Snapshot{taken: taken}
	for _, p := range list.GetPodResources() {
		for _, c := range p.GetContainers() {
			for _, d := range c.GetDevices() {
				if !isGPUResource(d) {
					continue
				}
				for _, id := range d.GetDeviceIds() {
					s.addDevicePluginID(p, c, d.GetResourceName(), id)
				}
			}
			for _, dr := range c.GetDynamicResources() {
				s.addClaim(p, c, dr)
			}
		}
	}
	s.index()
	if alloc != nil {
		s.hasAlloc = true
		for _, d := range alloc.GetDevices() {
			if !isGPUResource(d) {
				continue
			}
			for _, id := range d.GetDeviceIds() {
				parsed, _ := ParseDeviceID(id)
				s.allocatable = append(s.allocatable, AllocatableDevice{Resource: d.GetResourceName(), DeviceID: id, DeviceUUID: parsed.UUID})
			}
		}
	}
	return s
}

// addDevicePluginID adds one device a device plugin allocated: a UUID form,
// or GKE's minor-number form.
func (s *Snapshot) addDevicePluginID(p *podresourcesv1.PodResources, c *podresourcesv1.ContainerResources, resource, id string) {
	a := Allocation{
		Namespace: p.GetNamespace(), Pod: p.GetName(), Container: c.GetName(),
		Resource: resource, DeviceID: id, Ref: noRef,
	}
	if parsed, ok := ParseDeviceID(id); ok {
		a.DeviceUUID, a.Replica = parsed.UUID, parsed.Replica
	} else if ref, ok := ParseGKEDeviceID(id); ok {
		a.Ref, a.Replica = ref, ref.Replica
		s.byMinor = true
	} else {
		a.Replica = -1
	}
	s.allocs = append(s.allocs, a)
}

// addClaim adds the devices NVIDIA's DRA driver allocated through one claim;
// other drivers' devices are no GPUs the receiver can map, and are left out.
// The driver's resource name stands where a device plugin's resource would.
func (s *Snapshot) addClaim(p *podresourcesv1.PodResources, c *podresourcesv1.ContainerResources, dr *podresourcesv1.DynamicResource) {
	for _, cr := range dr.GetClaimResources() {
		if cr.GetDriverName() != DRADriverNVIDIA {
			continue
		}
		ref, _ := ParseDRADeviceName(cr.GetDeviceName())
		s.allocs = append(s.allocs, Allocation{
			Namespace: p.GetNamespace(), Pod: p.GetName(), Container: c.GetName(),
			Resource: cr.GetDriverName(), DeviceID: cr.GetDeviceName(), Replica: -1, Ref: ref,
			Claim: Claim{
				Name: dr.GetClaimName(), Namespace: dr.GetClaimNamespace(),
				Driver: cr.GetDriverName(), Pool: cr.GetPoolName(), Device: cr.GetDeviceName(),
			},
		})
		s.byMinor = true
	}
}

// Resolve maps the allocations that name their device by minor number to
// NVML UUIDs: uuidOf answers a reference with the UUID of the device it names
// on this node, or "" when none does. It returns a new snapshot (the receiver
// passes it to Source.Replace), or the raw snapshot itself when nothing needs
// resolving; it may be called again on its result, starting over from the
// raw answer (a MIG instance recreated under a new UUID).
func (s *Snapshot) Resolve(uuidOf func(MinorRef) string) *Snapshot {
	raw := s.Raw()
	if !raw.byMinor {
		return raw
	}
	r := &Snapshot{
		taken: raw.taken, allocs: slices.Clone(raw.allocs), allocatable: raw.allocatable,
		hasAlloc: raw.hasAlloc, byMinor: true, raw: raw,
	}
	for i := range r.allocs {
		a := &r.allocs[i]
		if !a.byMinor() {
			continue
		}
		if a.Ref.Valid() {
			a.DeviceUUID = uuidOf(a.Ref)
		}
		if a.DeviceUUID == "" {
			r.unresolved = append(r.unresolved, *a)
		}
	}
	r.index()
	return r
}

// Raw is the kubelet's answer as BuildSnapshot made it, before Resolve.
func (s *Snapshot) Raw() *Snapshot {
	if s.raw != nil {
		return s.raw
	}
	return s
}

// NeedsResolve says whether some allocation names its device by minor number.
func (s *Snapshot) NeedsResolve() bool { return s.byMinor }

// Unresolved are the allocations the last Resolve found no device for: a
// minor number or MIG instance NVML does not list, a device name of NVIDIA's
// DRA driver that is no GPU or MIG form. In order of device id, pod, container.
func (s *Snapshot) Unresolved() []Allocation { return s.unresolved }

// isGPUResource keeps NVIDIA's resources and any other whose ids are GPU or
// MIG UUIDs (a plugin deployed under another resource prefix).
func isGPUResource(d *podresourcesv1.ContainerDevices) bool {
	if strings.HasPrefix(d.GetResourceName(), "nvidia.com/") {
		return true
	}
	return slices.ContainsFunc(d.GetDeviceIds(), LooksLikeGPU)
}

func deviceKey(a Allocation) string {
	if a.DeviceUUID != "" {
		return a.DeviceUUID
	}
	return a.DeviceID
}

// index sorts the allocations and builds the lookup maps as sub-slices of two
// sorted arrays, so a snapshot costs a handful of allocations however many
// devices it holds.
func (s *Snapshot) index() {
	slices.SortFunc(s.allocs, func(a, b Allocation) int {
		return cmp.Or(strings.Compare(deviceKey(a), deviceKey(b)), strings.Compare(a.Namespace, b.Namespace),
			strings.Compare(a.Pod, b.Pod), strings.Compare(a.Container, b.Container), strings.Compare(a.DeviceID, b.DeviceID))
	})
	s.byDevice = make(map[string][]Allocation)
	s.byMIG = make(map[migKey][]Allocation)
	for i := 0; i < len(s.allocs); {
		j := i + 1
		for j < len(s.allocs) && deviceKey(s.allocs[j]) == deviceKey(s.allocs[i]) {
			j++
		}
		group := s.allocs[i:j:j]
		if len(group) > MaxDeviceAllocations {
			s.dropped += len(group) - MaxDeviceAllocations
			group = group[:MaxDeviceAllocations:MaxDeviceAllocations]
		}
		s.byDevice[deviceKey(s.allocs[i])] = group
		if d, _ := ParseDeviceID(s.allocs[i].DeviceUUID); d.Parent != "" {
			s.byMIG[migKey{d.Parent, d.GI, d.CI}] = group
		}
		i = j
	}
	byPod := slices.Clone(s.allocs)
	slices.SortStableFunc(byPod, func(a, b Allocation) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Pod, b.Pod))
	})
	s.byPod = make(map[podKey][]Allocation)
	for i := 0; i < len(byPod); {
		j := i + 1
		for j < len(byPod) && byPod[j].Namespace == byPod[i].Namespace && byPod[j].Pod == byPod[i].Pod {
			j++
		}
		s.byPod[podKey{byPod[i].Namespace, byPod[i].Pod}] = byPod[i:j:j]
		i = j
	}
}

// Dropped counts the allocations left out because their device already held
// MaxDeviceAllocations.
func (s *Snapshot) Dropped() int { return s.dropped }

// Taken is when the kubelet answered the List this snapshot holds; zero for
// the empty snapshot held before the first good List.
func (s *Snapshot) Taken() time.Time { return s.taken }

// Allocations are all GPU allocations, ordered by device UUID, namespace,
// pod, container and device id.
func (s *Snapshot) Allocations() []Allocation { return s.allocs }

// Device returns the allocations of the NVML device with this UUID (GPU-… or
// MIG-…), every time-sliced replica included.
func (s *Snapshot) Device(uuid string) []Allocation { return s.byDevice[uuid] }

// MIGDevice returns the allocations the plugin listed under the legacy MIG id
// MIG-<parent>/<gi>/<ci>, for a receiver whose NVML names the instance MIG-<uuid>.
func (s *Snapshot) MIGDevice(parentUUID string, gi, ci int) []Allocation {
	return s.byMIG[migKey{parentUUID, gi, ci}]
}

// Pod returns the GPU allocations of one pod.
func (s *Snapshot) Pod(namespace, pod string) []Allocation {
	return s.byPod[podKey{namespace, pod}]
}

// Allocatable returns the GPU devices the kubelet can allocate; known is
// false when the kubelet does not answer GetAllocatableResources.
func (s *Snapshot) Allocatable() (devices []AllocatableDevice, known bool) {
	return s.allocatable, s.hasAlloc
}

// ContainerOf names the container of a pod that holds the device, when
// exactly one container of that pod lists it; "" otherwise.
func (s *Snapshot) ContainerOf(namespace, pod, deviceUUID string) string {
	if deviceUUID == "" {
		return ""
	}
	name := ""
	for _, a := range s.byPod[podKey{namespace, pod}] {
		if a.DeviceUUID != deviceUUID || a.Container == name {
			continue
		}
		if name != "" {
			return "" // two containers share the device: the kubelet cannot say whose process it is
		}
		name = a.Container
	}
	return name
}

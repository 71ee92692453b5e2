package podresources

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

const (
	gpuC    = "GPU-9e1a3c5b-7d2f-4e6a-8b0c-1d3e5f7a9b2c"
	migB    = "MIG-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	legacyM = "MIG-" + gpuB + "/7/0"
)

func pod(ns, name string, containers ...*podresourcesv1.ContainerResources) *podresourcesv1.PodResources {
	return &podresourcesv1.PodResources{Namespace: ns, Name: name, Containers: containers}
}

func ctr(name string, devs ...*podresourcesv1.ContainerDevices) *podresourcesv1.ContainerResources {
	return &podresourcesv1.ContainerResources{Name: name, Devices: devs}
}

func devs(resource string, ids ...string) *podresourcesv1.ContainerDevices {
	return &podresourcesv1.ContainerDevices{ResourceName: resource, DeviceIds: ids}
}

// mixedNode is one node with every id shape: whole GPUs, a MIG instance under
// the mixed strategy (nvidia.com/mig-…) and one under single (nvidia.com/gpu),
// a legacy MIG id, time-sliced replicas shared by two pods, a pod with two
// GPU containers and a sidecar, and devices that are no GPU.
func mixedNode() *podresourcesv1.ListPodResourcesResponse {
	return &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		pod("ml", "train-0", ctr("main", devs("nvidia.com/gpu", gpuA)), ctr("sidecar")),
		pod("ml", "infer-mixed", ctr("server", devs("nvidia.com/mig-1g.10gb", migA))),
		pod("ml", "infer-single", ctr("server", devs("nvidia.com/gpu", migB))),
		pod("old", "legacy", ctr("app", devs("nvidia.com/mig-3g.40gb", legacyM))),
		pod("dev", "nb-1", ctr("jupyter", devs("nvidia.com/gpu.shared", gpuC+"::0"))),
		pod("dev", "nb-2", ctr("jupyter", devs("nvidia.com/gpu.shared", gpuC+"::1", gpuC+"::2"))),
		pod("ml", "two", ctr("a", devs("nvidia.com/gpu", gpuB)), ctr("b", devs("nvidia.com/gpu", gpuB))),
		pod("net", "rdma", ctr("x", devs("rdma/hca", "mlx5_0"), devs("example.com/accel", gpuB))),
		pod("gke", "idx", ctr("c", devs("nvidia.com/gpu", "nvidia0"))),
	}}
}

func TestBuildSnapshot(t *testing.T) {
	taken := time.Unix(1700000000, 0)
	s := BuildSnapshot(mixedNode(), nil, taken)
	assert.Equal(t, taken, s.Taken())
	_, known := s.Allocatable()
	assert.False(t, known)

	assert.Equal(t, []Allocation{{Namespace: "ml", Pod: "train-0", Container: "main", Resource: "nvidia.com/gpu", DeviceID: gpuA, DeviceUUID: gpuA, Replica: -1, Ref: noRef}}, s.Device(gpuA))
	assert.Equal(t, "nvidia.com/mig-1g.10gb", s.Device(migA)[0].Resource, "mixed strategy")
	assert.Equal(t, "infer-single", s.Device(migB)[0].Pod, "single strategy")

	shared := s.Device(gpuC)
	require.Len(t, shared, 3, "every replica of a time-sliced GPU")
	assert.Equal(t, []string{gpuC + "::0", gpuC + "::1", gpuC + "::2"}, []string{shared[0].DeviceID, shared[1].DeviceID, shared[2].DeviceID})
	assert.Equal(t, []int{0, 1, 2}, []int{shared[0].Replica, shared[1].Replica, shared[2].Replica})

	assert.Equal(t, "legacy", s.Device(legacyM)[0].Pod)
	assert.Equal(t, "legacy", s.MIGDevice(gpuB, 7, 0)[0].Pod, "legacy id found by parent and instance ids")
	assert.Empty(t, s.MIGDevice(gpuB, 7, 1))

	// gpuB: two containers of "two", plus the plugin under another prefix
	// whose id is a GPU UUID; the rdma device is dropped.
	assert.Len(t, s.Device(gpuB), 3)
	require.Len(t, s.Pod("net", "rdma"), 1)
	assert.Equal(t, "example.com/accel", s.Pod("net", "rdma")[0].Resource)
	// GKE's minor-number id is kept under its listed id until resolved.
	assert.Equal(t, []Allocation{{Namespace: "gke", Pod: "idx", Container: "c", Resource: "nvidia.com/gpu", DeviceID: "nvidia0", Replica: -1, Ref: ref(0)}}, s.Device("nvidia0"))
	assert.Len(t, s.Allocations(), 11)
	assert.Empty(t, s.Pod("ml", "nope"))
}

func TestSnapshotContainerOf(t *testing.T) {
	s := BuildSnapshot(mixedNode(), nil, time.Time{})
	assert.Equal(t, "main", s.ContainerOf("ml", "train-0", gpuA), "the sidecar holds no GPU")
	assert.Equal(t, "jupyter", s.ContainerOf("dev", "nb-2", gpuC), "one container, two replicas")
	assert.Empty(t, s.ContainerOf("ml", "two", gpuB), "two containers list the device")
	assert.Empty(t, s.ContainerOf("ml", "train-0", gpuB), "not this pod's device")
	assert.Empty(t, s.ContainerOf("ml", "train-0", ""))
	assert.Empty(t, emptySnapshot.ContainerOf("ml", "train-0", gpuA))
}

func TestBuildSnapshotAllocatable(t *testing.T) {
	alloc := &podresourcesv1.AllocatableResourcesResponse{Devices: []*podresourcesv1.ContainerDevices{
		devs("nvidia.com/gpu", gpuA, gpuB), devs("rdma/hca", "mlx5_0"),
	}}
	devices, known := BuildSnapshot(mixedNode(), alloc, time.Time{}).Allocatable()
	assert.True(t, known)
	assert.Equal(t, []AllocatableDevice{
		{Resource: "nvidia.com/gpu", DeviceID: gpuA, DeviceUUID: gpuA},
		{Resource: "nvidia.com/gpu", DeviceID: gpuB, DeviceUUID: gpuB},
	}, devices)
}

func claim(name, ns string, res ...*podresourcesv1.ClaimResource) *podresourcesv1.DynamicResource {
	return &podresourcesv1.DynamicResource{ClaimName: name, ClaimNamespace: ns, ClaimResources: res}
}

func claimDev(driver, pool, device string) *podresourcesv1.ClaimResource {
	return &podresourcesv1.ClaimResource{DriverName: driver, PoolName: pool, DeviceName: device}
}

// draNode is a node whose GPUs come from NVIDIA's DRA driver (a whole GPU and
// a MIG device), GKE's device plugin (a whole GPU time-shared by two pods) and
// NVIDIA's device plugin, beside a DRA device of another driver.
func draNode() *podresourcesv1.ListPodResourcesResponse {
	dra := func(name string, dr ...*podresourcesv1.DynamicResource) *podresourcesv1.ContainerResources {
		return &podresourcesv1.ContainerResources{Name: name, DynamicResources: dr}
	}
	return &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		pod("ml", "dra-train", dra("main", claim("train-gpu", "ml", claimDev(DRADriverNVIDIA, "node-a", "gpu-1")))),
		pod("ml", "dra-mig", dra("main", claim("mig", "ml", claimDev(DRADriverNVIDIA, "node-a", "gpu-0-mig-1g10gb-19-2")))),
		pod("ml", "dra-vfio", dra("main", claim("vfio", "ml", claimDev(DRADriverNVIDIA, "node-a", "gpu-vfio-3")))),
		pod("net", "nic", dra("main", claim("nic", "net", claimDev("dra.net", "node-a", "eth1")))),
		pod("dev", "gke-a", ctr("nb", devs("nvidia.com/gpu", "nvidia2/vgpu0"))),
		pod("dev", "gke-b", ctr("nb", devs("nvidia.com/gpu", "nvidia2/vgpu1"))),
		pod("dev", "gke-mig", ctr("nb", devs("nvidia.com/gpu", "nvidia0/gi5"))),
		pod("ml", "plugin", ctr("main", devs("nvidia.com/gpu", gpuA))),
	}}
}

func TestBuildSnapshotDRAAndGKE(t *testing.T) {
	raw := BuildSnapshot(draNode(), nil, time.Time{})
	assert.True(t, raw.NeedsResolve())
	assert.Len(t, raw.Allocations(), 7, "the other DRA driver's device is left out")
	dra := raw.Pod("ml", "dra-train")
	require.Len(t, dra, 1)
	assert.Equal(t, Allocation{
		Namespace: "ml", Pod: "dra-train", Container: "main", Resource: DRADriverNVIDIA, DeviceID: "gpu-1", Replica: -1,
		Ref:   ref(1),
		Claim: Claim{Name: "train-gpu", Namespace: "ml", Driver: DRADriverNVIDIA, Pool: "node-a", Device: "gpu-1"},
	}, dra[0])
	assert.Equal(t, 1, raw.Pod("dev", "gke-b")[0].Replica, "vgpu<n> is the replica")
	assert.Empty(t, raw.Device(gpuB), "nothing resolved yet")

	// The node: minor 1 is gpuB, minor 2 gpuC, minor 0 is in MIG mode with
	// GI 5 (profile 19, placement 2) as migA. Minor 3 does not exist.
	uuidOf := func(r MinorRef) string {
		switch {
		case r.Minor == 1 && !r.MIG():
			return gpuB
		case r.Minor == 2 && !r.MIG():
			return gpuC
		case r.Minor == 0 && (r.GI == 5 || r.ProfileID == 19 && r.PlacementStart == 2):
			return migA
		}
		return ""
	}
	s := raw.Resolve(uuidOf)
	assert.Same(t, raw, s.Raw())
	assert.Equal(t, "dra-train", s.Device(gpuB)[0].Pod)
	assert.Equal(t, "train-gpu", s.Device(gpuB)[0].Claim.Name)
	shared := s.Device(gpuC)
	require.Len(t, shared, 2, "two GKE time-sharing replicas")
	assert.Equal(t, []string{"gke-a", "gke-b"}, []string{shared[0].Pod, shared[1].Pod})
	require.Len(t, s.Device(migA), 2, "the DRA MIG device and GKE's gi form")
	assert.Equal(t, "main", s.ContainerOf("ml", "dra-train", gpuB), "containers are named through resolved devices")
	assert.Equal(t, gpuA, s.Device(gpuA)[0].DeviceUUID, "device plugin UUIDs untouched")
	unresolved := s.Unresolved()
	require.Len(t, unresolved, 1)
	assert.Equal(t, "gpu-vfio-3", unresolved[0].DeviceID)
	assert.Empty(t, raw.Unresolved(), "the raw answer is not modified")
	assert.Empty(t, raw.Device(gpuB))

	// Resolved again from its own result, with the MIG instance gone.
	again := s.Resolve(func(r MinorRef) string {
		if r.MIG() {
			return ""
		}
		return uuidOf(r)
	})
	assert.Same(t, raw, again.Raw())
	assert.Empty(t, again.Device(migA))
	assert.Len(t, again.Unresolved(), 3)

	plain := BuildSnapshot(&podresourcesv1.ListPodResourcesResponse{PodResources: mixedNode().PodResources[:8]}, nil, time.Time{})
	assert.Same(t, plain, plain.Resolve(uuidOf), "nothing to resolve: the same snapshot")
}

// A List of 50,000 pods: those on GPUs of other nodes cost no lookup of this node's devices,
// and one device holds at most MaxDeviceAllocations however many containers name it.
func TestSnapshotBoundedPerDevice(t *testing.T) {
	const local = "GPU-11111111-2222-3333-4444-555555555555"
	var pods []*podresourcesv1.PodResources
	for i := range 50000 {
		id := fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", i, i) // another node's GPU
		if i%2 == 0 {
			id = fmt.Sprintf("%s::%d", local, i) // "replicas" of this one, far past any plugin's
		}
		pods = append(pods, pod("batch", fmt.Sprintf("job-%05d", i), ctr("main", devs("nvidia.com/gpu", id))))
	}
	s := BuildSnapshot(&podresourcesv1.ListPodResourcesResponse{PodResources: pods}, nil, time.Unix(1, 0))
	assert.Len(t, s.Device(local), MaxDeviceAllocations)
	assert.Equal(t, 25000-MaxDeviceAllocations, s.Dropped())
	assert.Empty(t, s.Device("GPU-22222222-2222-3333-4444-555555555555"), "a GPU no pod names")
}

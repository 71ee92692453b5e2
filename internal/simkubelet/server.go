package simkubelet

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Pod is one pod as List reports it.
type Pod struct {
	Namespace  string
	Name       string
	Containers []Container
}

// Container is one container and the devices the kubelet allocated to it.
type Container struct {
	Name    string
	Devices []Devices
	// Claims are the DRA claims whose devices the container got; List reports them as
	// ContainerResources.dynamic_resources.
	Claims []Claim
}

// Claim is one ResourceClaim of a container and the devices its driver allocated.
type Claim struct {
	Name, Namespace string
	Devices         []ClaimDevice
}

// ClaimDevice is one DRA device: the driver, pool and device names that identify it.
type ClaimDevice struct {
	Driver, Pool, Device string
}

// Devices are the ids of one extended resource, as the device plugin named them.
type Devices struct {
	Resource string   // nvidia.com/gpu, nvidia.com/mig-1g.10gb, …
	IDs      []string // GPU-…, MIG-…, GPU-…::2
}

// Options choose which kubelet the server mimics.
type Options struct {
	// NoAllocatable answers GetAllocatableResources with Unimplemented, as
	// kubelets before 1.21 do.
	NoAllocatable bool
}

// Server is a fake kubelet PodResources endpoint. Its methods are safe for
// concurrent use; Stop is safe without Start.
type Server struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	opts Options

	mu          sync.Mutex
	pods        []*podresourcesv1.PodResources
	allocatable []*podresourcesv1.ContainerDevices // nil: derived from the pods
	listErr     error
	listCalls   int
	grpc        *grpc.Server
	served      chan struct{} // closed when Serve returns
}

// New returns a stopped server with no pods.
func New(opts Options) *Server { return &Server{opts: opts} }

// Start listens on socketPath and serves until Stop. A stale socket file (a
// previous run that was killed) is replaced, as the kubelet does; any other
// file there is an error.
func (s *Server) Start(socketPath string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grpc != nil {
		return fmt.Errorf("start fake kubelet on %s: already serving", socketPath)
	}
	if fi, err := os.Lstat(socketPath); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return fmt.Errorf("start fake kubelet on %s: a file that is no socket is in the way", socketPath)
		}
		if err := os.Remove(socketPath); err != nil {
			return fmt.Errorf("remove stale socket %s: %w", socketPath, err)
		}
	}
	ln, err := net.Listen("unix", socketPath)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", socketPath, err)
	}
	s.grpc = grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(s.grpc, s)
	s.served = make(chan struct{})
	go func(g *grpc.Server, done chan struct{}) {
		defer close(done)
		_ = g.Serve(ln) // returns nil after Stop; the listener (and socket file) is closed by it
	}(s.grpc, s.served)
	return nil
}

// Stop closes the listener and every connection and waits for the serving
// goroutine, so nothing outlives it. It can be started again afterwards.
func (s *Server) Stop() {
	s.mu.Lock()
	g, done := s.grpc, s.served
	s.grpc, s.served = nil, nil
	s.mu.Unlock()
	if g == nil {
		return
	}
	g.Stop()
	<-done
}

// SetPods replaces the pods List reports; the server keeps its own copy.
func (s *Server) SetPods(pods []Pod) {
	out := make([]*podresourcesv1.PodResources, 0, len(pods))
	for _, p := range pods {
		pr := &podresourcesv1.PodResources{Name: p.Name, Namespace: p.Namespace}
		for _, c := range p.Containers {
			pr.Containers = append(pr.Containers, &podresourcesv1.ContainerResources{
				Name: c.Name, Devices: toDevices(c.Devices), DynamicResources: toDynamicResources(c.Claims),
			})
		}
		out = append(out, pr)
	}
	s.mu.Lock()
	s.pods = out
	s.mu.Unlock()
}

func toDynamicResources(claims []Claim) []*podresourcesv1.DynamicResource {
	var out []*podresourcesv1.DynamicResource
	for _, c := range claims {
		dr := &podresourcesv1.DynamicResource{ClaimName: c.Name, ClaimNamespace: c.Namespace}
		for _, d := range c.Devices {
			dr.ClaimResources = append(dr.ClaimResources, &podresourcesv1.ClaimResource{
				DriverName: d.Driver, PoolName: d.Pool, DeviceName: d.Device,
			})
		}
		out = append(out, dr)
	}
	return out
}

// SetAllocatable sets what GetAllocatableResources reports; until it is
// called, the server reports every device its pods hold.
func (s *Server) SetAllocatable(devices []Devices) {
	d := toDevices(devices)
	s.mu.Lock()
	s.allocatable = d
	s.mu.Unlock()
}

// FailList makes List answer err (as a gRPC status error when it is one,
// else Unavailable) until it is called with nil.
func (s *Server) FailList(err error) {
	s.mu.Lock()
	s.listErr = err
	s.mu.Unlock()
}

// ListCalls counts List calls, so tests can check the client caches.
func (s *Server) ListCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listCalls
}

// List implements the kubelet's PodResourcesListerServer.
func (s *Server) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listCalls++
	if s.listErr != nil {
		if _, ok := status.FromError(s.listErr); ok {
			return nil, s.listErr
		}
		return nil, status.Error(codes.Unavailable, s.listErr.Error())
	}
	// The response is marshalled after return, outside the lock; the pods
	// slice is replaced, never modified, by SetPods, so sharing it is safe.
	return &podresourcesv1.ListPodResourcesResponse{PodResources: s.pods}, nil
}

// GetAllocatableResources implements the kubelet's PodResourcesListerServer.
func (s *Server) GetAllocatableResources(ctx context.Context, req *podresourcesv1.AllocatableResourcesRequest) (*podresourcesv1.AllocatableResourcesResponse, error) {
	if s.opts.NoAllocatable {
		return s.UnimplementedPodResourcesListerServer.GetAllocatableResources(ctx, req)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allocatable != nil {
		return &podresourcesv1.AllocatableResourcesResponse{Devices: s.allocatable}, nil
	}
	var all []*podresourcesv1.ContainerDevices
	for _, p := range s.pods {
		for _, c := range p.Containers {
			all = append(all, c.Devices...)
		}
	}
	return &podresourcesv1.AllocatableResourcesResponse{Devices: all}, nil
}

func toDevices(ds []Devices) []*podresourcesv1.ContainerDevices {
	out := make([]*podresourcesv1.ContainerDevices, 0, len(ds))
	for _, d := range ds {
		out = append(out, &podresourcesv1.ContainerDevices{ResourceName: d.Resource, DeviceIds: append([]string(nil), d.IDs...)})
	}
	return out
}

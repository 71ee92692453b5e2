package podresources

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// maxMessageSize bounds one answer as the kubelet's own PodResources client
// does (defaultPodResourcesMaxSize, 16 MiB, k8s.io/kubernetes
// pkg/kubelet/apis/podresources/client.go): a node's List is kilobytes, so
// anything near this is no kubelet answer worth decoding.
const maxMessageSize = 16 << 20

// client is one connection to the kubelet's PodResources socket.
type client struct {
	conn    *grpc.ClientConn
	api     podresourcesv1.PodResourcesListerClient
	timeout time.Duration
	// noAllocatable is set once the kubelet says it has no
	// GetAllocatableResources, so it is never asked again.
	noAllocatable bool
}

// newClient prepares a connection; gRPC dials lazily, on the first call.
// maxBackoff caps gRPC's reconnect delay (default 120 s) so a restarted
// kubelet is found again by the next refresh rather than minutes later.
func newClient(socketPath string, timeout, maxBackoff time.Duration) (*client, error) {
	abs, err := filepath.Abs(socketPath)
	if err != nil {
		return nil, fmt.Errorf("resolve PodResources socket path %q: %w", socketPath, err)
	}
	bo := backoff.DefaultConfig
	bo.MaxDelay = maxBackoff
	conn, err := grpc.NewClient("unix://"+abs,
		grpc.WithTransportCredentials(insecure.NewCredentials()), // a local unix socket, as the kubelet serves it
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bo, MinConnectTimeout: timeout}),
	)
	if err != nil {
		return nil, fmt.Errorf("create PodResources client for %s: %w", abs, err)
	}
	return &client{conn: conn, api: podresourcesv1.NewPodResourcesListerClient(conn), timeout: timeout}, nil
}

// list calls List, and GetAllocatableResources unless the kubelet lacks it.
// alloc is nil when it does; an error from it alone does not fail the refresh.
func (c *client) list(ctx context.Context) (list *podresourcesv1.ListPodResourcesResponse, alloc *podresourcesv1.AllocatableResourcesResponse, allocErr error, err error) {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	list, err = c.api.List(cctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list pod resources: %w", err)
	}
	if c.noAllocatable {
		return list, nil, nil, nil
	}
	alloc, allocErr = c.api.GetAllocatableResources(cctx, &podresourcesv1.AllocatableResourcesRequest{})
	if allocErr != nil {
		if absentMethod(allocErr) {
			c.noAllocatable = true
		}
		return list, nil, fmt.Errorf("get allocatable resources: %w", allocErr), nil
	}
	return list, alloc, nil, nil
}

// absentMethod recognises a kubelet without GetAllocatableResources: older
// than 1.21 it answers Unimplemented; 1.21-1.22 with the feature gate
// KubeletPodResourcesGetAllocatable off answer a plain error saying "disabled".
func absentMethod(err error) bool {
	st, _ := status.FromError(err)
	return st.Code() == codes.Unimplemented || strings.Contains(st.Message(), "GetAllocatableResources disabled")
}

func (c *client) close() error {
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("close PodResources connection: %w", err)
	}
	return nil
}

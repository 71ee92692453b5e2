package simkubelet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// socketPath is short: unix socket paths are limited to 108 bytes and
// t.TempDir() under a long test name can exceed that.
func socketPath(t *testing.T) string {
	dir, err := os.MkdirTemp("", "sk")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "kubelet.sock")
}

func dial(t *testing.T, path string) podresourcesv1.PodResourcesListerClient {
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return podresourcesv1.NewPodResourcesListerClient(conn)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestServerListsWhatWasSet(t *testing.T) {
	path := socketPath(t)
	s := New(Options{})
	require.NoError(t, s.Start(path))
	defer s.Stop()
	c := dial(t, path)

	resp, err := c.List(ctx(t), &podresourcesv1.ListPodResourcesRequest{})
	require.NoError(t, err)
	assert.Empty(t, resp.GetPodResources())

	in := []Pod{{Namespace: "ml", Name: "train-0", Containers: []Container{
		{Name: "main", Devices: []Devices{{Resource: "nvidia.com/gpu", IDs: []string{"GPU-a", "GPU-b"}}}},
		{Name: "sidecar"},
	}}}
	s.SetPods(in)
	in[0].Containers[0].Devices[0].IDs[0] = "changed" // the server keeps its own copy

	resp, err = c.List(ctx(t), &podresourcesv1.ListPodResourcesRequest{})
	require.NoError(t, err)
	require.Len(t, resp.GetPodResources(), 1)
	p := resp.GetPodResources()[0]
	assert.Equal(t, "ml", p.GetNamespace())
	assert.Equal(t, "train-0", p.GetName())
	require.Len(t, p.GetContainers(), 2)
	assert.Equal(t, []string{"GPU-a", "GPU-b"}, p.GetContainers()[0].GetDevices()[0].GetDeviceIds())
	assert.Equal(t, 2, s.ListCalls())

	alloc, err := c.GetAllocatableResources(ctx(t), &podresourcesv1.AllocatableResourcesRequest{})
	require.NoError(t, err)
	require.Len(t, alloc.GetDevices(), 1, "derived from the pods until SetAllocatable")
	s.SetAllocatable([]Devices{{Resource: "nvidia.com/gpu", IDs: []string{"GPU-a", "GPU-b", "GPU-c"}}})
	alloc, err = c.GetAllocatableResources(ctx(t), &podresourcesv1.AllocatableResourcesRequest{})
	require.NoError(t, err)
	assert.Equal(t, []string{"GPU-a", "GPU-b", "GPU-c"}, alloc.GetDevices()[0].GetDeviceIds())
}

func TestServerFailsListAndMimicsOldKubelet(t *testing.T) {
	path := socketPath(t)
	s := New(Options{NoAllocatable: true})
	require.NoError(t, s.Start(path))
	defer s.Stop()
	c := dial(t, path)

	_, err := c.GetAllocatableResources(ctx(t), &podresourcesv1.AllocatableResourcesRequest{})
	assert.Equal(t, codes.Unimplemented, status.Code(err))

	s.FailList(errors.New("kubelet is restarting"))
	_, err = c.List(ctx(t), &podresourcesv1.ListPodResourcesRequest{})
	assert.Equal(t, codes.Unavailable, status.Code(err))
	s.FailList(status.Error(codes.ResourceExhausted, "rate limited"))
	_, err = c.List(ctx(t), &podresourcesv1.ListPodResourcesRequest{})
	assert.Equal(t, codes.ResourceExhausted, status.Code(err))
	s.FailList(nil)
	_, err = c.List(ctx(t), &podresourcesv1.ListPodResourcesRequest{})
	assert.NoError(t, err)
}

func TestServerLifecycle(t *testing.T) {
	New(Options{}).Stop() // safe without Start

	path := socketPath(t)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	s := New(Options{})
	assert.ErrorContains(t, s.Start(path), "no socket")
	require.NoError(t, os.Remove(path))

	require.NoError(t, s.Start(path))
	assert.ErrorContains(t, s.Start(path), "already serving")
	s.Stop()
	s.Stop()
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "Stop removes the socket")

	// A socket left behind by a killed run is replaced, and a stopped
	// server starts again.
	first := New(Options{})
	require.NoError(t, first.Start(path))
	require.NoError(t, s.Start(path))
	s.Stop()
	first.Stop()
}

package podresources

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
)

// benchNode is the shape of the receiver's benchmark node: 8 GPUs, one pod
// per GPU with a GPU container and a sidecar, as List answers it.
func benchNode() (pods []simkubelet.Pod, uids, cids, gpus []string) {
	for i := range 8 {
		gpu := fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", i, i)
		pods = append(pods, simkubelet.Pod{Namespace: "ml", Name: fmt.Sprintf("train-%d", i), Containers: []simkubelet.Container{
			{Name: "main", Devices: []simkubelet.Devices{{Resource: "nvidia.com/gpu", IDs: []string{gpu}}}},
			{Name: "sidecar"},
		}})
		uids = append(uids, fmt.Sprintf("%08x-1111-4111-8111-%012x", i, i))
		cids = append(cids, fmt.Sprintf("%064x", i+1))
		gpus = append(gpus, gpu)
	}
	return pods, uids, cids, gpus
}

func benchList(pods []simkubelet.Pod) *podresourcesv1.ListPodResourcesResponse {
	resp := &podresourcesv1.ListPodResourcesResponse{}
	for _, p := range pods {
		pr := pod(p.Namespace, p.Name)
		for _, c := range p.Containers {
			cr := ctr(c.Name)
			for _, d := range c.Devices {
				cr.Devices = append(cr.Devices, devs(d.Resource, d.IDs...))
			}
			pr.Containers = append(pr.Containers, cr)
		}
		resp.PodResources = append(resp.PodResources, pr)
	}
	return resp
}

// BenchmarkBuildSnapshot is the conversion a refresh pays once per interval.
func BenchmarkBuildSnapshot(b *testing.B) {
	pods, _, _, _ := benchNode()
	list := benchList(pods)
	b.ReportAllocs()
	for b.Loop() {
		BuildSnapshot(list, nil, time.Time{})
	}
}

// BenchmarkRefresh is one whole refresh over a real unix socket: List and
// GetAllocatableResources against the fake kubelet, and the conversion.
func BenchmarkRefresh(b *testing.B) {
	pods, _, _, _ := benchNode()
	kub := simkubelet.New(simkubelet.Options{})
	kub.SetPods(pods)
	path := socketPathB(b)
	require.NoError(b, kub.Start(path))
	defer kub.Stop()
	clk := &clock{t: time.Unix(0, 0)}
	src := NewSource(Options{SocketPath: path, Logger: zap.NewNop(), Now: clk.now})
	defer src.Shutdown(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		clk.advance(DefaultRefreshInterval)
		src.Refresh(context.Background())
	}
	require.Len(b, src.Snapshot().Allocations(), 8)
}

// BenchmarkLookup is the per-process cost on the scraper's path: 8 processes,
// one per pod, named by uid and container link; and, without the links, by
// PodResources. It must not allocate.
func BenchmarkLookup(b *testing.B) {
	pods, uids, cids, gpus := benchNode()
	var dirs, links []string
	for i, p := range pods {
		dirs = append(dirs, p.Namespace+"_"+p.Name+"_"+uids[i])
		links = append(links, p.Name+"_"+p.Namespace+"_main-"+cids[i]+".log")
	}
	src := NewSource(Options{PodLogsDir: fakeLogTree(b, dirs, links)})
	require.NoError(b, src.Start(context.Background()))
	src.snap.Store(BuildSnapshot(benchList(pods), nil, time.Time{}))
	for _, bc := range []struct {
		name string
		cids []string
	}{{"links", cids}, {"podresources", make([]string, 8)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range 8 {
					if src.Lookup(uids[i], bc.cids[i], gpus[i]).Container != "main" {
						b.Fatal("unnamed")
					}
				}
			}
		})
	}
}

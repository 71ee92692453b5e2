package gpumemreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// BenchmarkScrapeKubernetes is BenchmarkScrape on a Kubernetes node: the 16 processes of
// each GPU belong to one pod the kubelet allocated all 8 GPUs to, named through the kubelet's
// log directories, with PodResources served over a real unix socket. /refresh_10s is the
// default (one List per 10 s, so a scrape pays only the lookups); /list_every_scrape forces a
// List on every scrape, the cost one scrape per refresh interval pays. The dra_ cases
// allocate the GPUs through NVIDIA's DRA driver (gpu-<minor>) instead, which the receiver
// maps through the minor numbers again after every List.
func BenchmarkScrapeKubernetes(b *testing.B) {
	for _, bc := range []struct {
		name    string
		refresh time.Duration
		dra     bool
	}{
		{"refresh_10s", 10 * time.Second, false}, {"list_every_scrape", time.Nanosecond, false},
		{"dra_refresh_10s", 10 * time.Second, true}, {"dra_list_every_scrape", time.Nanosecond, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := startKubernetesBenchNode(b, bc.refresh, bc.dra)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := r.scrapeMetrics(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/8, "ns/gpu")
		})
	}
}

func startKubernetesBenchNode(b *testing.B, refresh time.Duration, dra bool) *gpuMemReceiver {
	b.Helper()
	gpus, tree := benchNode()
	dir, err := os.MkdirTemp("", "bench")
	require.NoError(b, err)
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	podLogs := filepath.Join(dir, "pods")
	const uid = "1b2c3d4e-aaaa-bbbb-cccc-111122223333" // benchNode's cgroups name it
	require.NoError(b, os.MkdirAll(filepath.Join(podLogs, "ml_train-x2k9q_"+uid, "trainer"), 0o755))
	require.NoError(b, os.MkdirAll(filepath.Join(dir, "containers"), 0o755))
	require.NoError(b, os.Symlink(filepath.Join(podLogs, "ml_train-x2k9q_"+uid, "trainer", "0.log"),
		filepath.Join(dir, "containers", "train-x2k9q_ml_trainer-"+hex64+".log")))
	ids := make([]string, len(gpus))
	for i, g := range gpus {
		ids[i] = g.uuid
	}
	ctr := simkubelet.Container{Name: "trainer", Devices: []simkubelet.Devices{{Resource: "nvidia.com/gpu", IDs: ids}}}
	if dra {
		claim := simkubelet.Claim{Name: "train-gpus", Namespace: "ml"}
		for i := range gpus {
			claim.Devices = append(claim.Devices, simkubelet.ClaimDevice{Driver: "gpu.nvidia.com", Pool: "node-a", Device: fmt.Sprintf("gpu-%d", i)})
		}
		ctr = simkubelet.Container{Name: "trainer", Claims: []simkubelet.Claim{claim}}
	}
	kubelet := simkubelet.New(simkubelet.Options{})
	kubelet.SetPods([]simkubelet.Pod{{Namespace: "ml", Name: "train-x2k9q", Containers: []simkubelet.Container{ctr}}})
	socket := filepath.Join(dir, "kubelet.sock")
	require.NoError(b, kubelet.Start(socket))
	b.Cleanup(kubelet.Stop)

	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	cfg.Kubernetes.RefreshInterval = refresh
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	lib, fsys := newFakeNVML(gpus...), procTree(tree)
	r.newBackend = func(*Config) (node.Node, error) {
		return node.Node{Lib: lib, ProcFS: fsys, PodResourcesSocket: socket, PodLogsDir: podLogs}, nil
	}
	require.NoError(b, r.Start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, r.Shutdown(context.Background())) })
	return r
}

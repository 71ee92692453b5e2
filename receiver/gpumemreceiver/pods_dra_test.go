package gpumemreceiver

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/pidns"
)

const (
	draGPU    = "GPU-40a1b2c3-d4e5-4f60-8a71-b2c3d4e5f607" // index 0, minor 2
	gkeGPU    = "GPU-41b2c3d4-e5f6-4071-9b82-c3d4e5f60718" // index 1, minor 0
	pluginGPU = "GPU-42c3d4e5-f607-4182-8c93-d4e5f6071829" // index 2, minor 1
	draMIG    = "MIG-54d4e5f6-0718-4293-9da4-e5f60718293c" // on minor 3, GI profile 19, placement 2
	otherMIG  = "MIG-53d4e5f6-0718-4293-9da4-e5f60718293b" // same profile, placement 0
)

// On a node whose GPUs the kubelet names by minor number (NVIDIA's DRA driver, GKE's device
// plugin) the allocations land on the GPU with that minor, not the index; DRA allocations
// carry their claim; no process of an allocated pod is an unexpected consumer; a stray pod
// still is one; a pod whose claim names a GPU this node lacks is counted apart, with one INFO.
func TestMinorNumberAllocations(t *testing.T) {
	cfg := builtinConfig()
	cfg.Simulated.Scenario = filepath.Join("..", "..", "testdata", "scenarios", "kubernetes", "dra_gke.yaml")
	n := startPodNode(t, cfg)
	var gpus map[string]map[string][]point
	for range 2 { // the second scrape reuses the first one's resolution
		md, err := n.r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		gpus = byGPU(md)
	}

	dra := gpus[draGPU]["nvidia.gpu.allocation"]
	require.Len(t, dra, 1, "gpu-2 is the GPU whose minor is 2 (its index is 0)")
	assert.Equal(t, map[string]any{
		"k8s.pod.name": "dra-train", "k8s.namespace.name": "ml", "k8s.container.name": "trainer",
		"k8s.pod.uid":                    "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c81",
		"nvidia.gpu.allocation.resource": "gpu.nvidia.com", "nvidia.gpu.allocation.device_id": "gpu-2",
		"nvidia.gpu.allocation.claim.name": "train-gpu", "nvidia.gpu.allocation.claim.namespace": "ml",
		"nvidia.gpu.allocation.dra.driver": "gpu.nvidia.com", "nvidia.gpu.allocation.dra.pool": "node",
		"nvidia.gpu.allocation.dra.device": "gpu-2",
	}, dra[0].attrs)
	assert.Empty(t, gpus[pluginGPU]["nvidia.gpu.allocation.idle_time"][1:], "only the plugin's pod on GPU 2")

	gke := gpus[gkeGPU]["nvidia.gpu.allocation"]
	require.Len(t, gke, 2, "two time-sharing replicas of the GPU with minor 0")
	assert.ElementsMatch(t, []any{"nvidia0/vgpu0", "nvidia0/vgpu1"},
		[]any{gke[0].attrs["nvidia.gpu.allocation.device_id"], gke[1].attrs["nvidia.gpu.allocation.device_id"]})
	assert.NotContains(t, gke[0].attrs, "nvidia.gpu.allocation.claim.name", "no claim on a device plugin's allocation")

	mig := gpus[draMIG]["nvidia.gpu.allocation"]
	require.Len(t, mig, 1, "the MIG device by GI profile id and placement start")
	assert.Equal(t, "dra-mig", mig[0].attrs["k8s.pod.name"])
	assert.Empty(t, gpus[otherMIG]["nvidia.gpu.allocation"], "the other 1g.10gb instance is not it")

	for _, uuid := range []string{draGPU, gkeGPU, draMIG} {
		for _, p := range gpus[uuid]["nvidia.gpu.process.unexpected.count"] {
			assert.Zero(t, p.value, "%s runs only what the kubelet placed there: %v", uuid, p.attrs)
		}
		for _, p := range gpus[uuid]["nvidia.gpu.process.memory.usage"] {
			assert.NotEmpty(t, p.attrs["k8s.container.name"], "%s: the container named through the resolved allocation", uuid)
		}
	}
	counts := map[any]float64{}
	for _, p := range gpus[pluginGPU]["nvidia.gpu.process.unexpected.count"] {
		counts[p.attrs["nvidia.gpu.process.unexpected.reason"]] = p.value
	}
	assert.Equal(t, map[any]float64{"other_pod": 1, "no_pod": 0, "allocation_unresolved": 1}, counts)

	recs := records(n.logs.AllLogs(), metadata.LogEventNameProcessUnexpected)
	require.Len(t, recs, 1, "a record for the stray pod only")
	assert.Equal(t, "stray", recs[0].Attributes().AsRaw()["k8s.pod.name"])
	infos := n.obs.FilterMessageSnippet("no GPU of this node matches").All()
	require.Len(t, infos, 1, "one INFO, not one per scrape")
	assert.Equal(t, "gpu-9", infos[0].ContextMap()["device_id"])
}

// While NVML hides other PID namespaces' processes, an allocated pod's absence from its GPU
// says nothing: allocations are still reported, idle time and reconciliation are not.
func TestHiddenProcessesSkipIdleAndReconciliation(t *testing.T) {
	cfg := builtinConfig()
	cfg.Simulated.Scenario = filepath.Join("..", "..", "testdata", "scenarios", "kubernetes", "dra_gke.yaml")
	n := startPodNode(t, cfg)
	n.r.scraper.pids = &pidNamespace{res: pidns.Result{Verdict: pidns.Own}, logger: zap.NewNop()}
	md, err := n.r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	gpus := byGPU(md)
	require.Equal(t, 1.0, gpus[pluginGPU]["nvidia.gpu.process.hidden"][0].value, "the simulated driver translates pids")
	assert.Len(t, gpus[draGPU]["nvidia.gpu.allocation"], 1)
	for uuid, m := range gpus {
		assert.Empty(t, m["nvidia.gpu.allocation.idle_time"], uuid)
		assert.Empty(t, m["nvidia.gpu.process.unexpected.count"], uuid)
	}
	assert.Empty(t, records(n.logs.AllLogs(), metadata.LogEventNameProcessUnexpected))
}

package gpumemreceiver

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"
)

// podNode runs the receiver on a simulated scenario with a logs sink and an observed logger.
type podNode struct {
	r    *gpuMemReceiver
	logs *consumertest.LogsSink
	obs  *observer.ObservedLogs
	// clock is read by the receiver's goroutines (the Xid merge) too.
	clock atomic.Int64
}

func (n *podNode) advance(d time.Duration) { n.clock.Add(int64(d)) }

func startPodNode(t *testing.T, cfg *Config) *podNode {
	t.Helper()
	core, obs := observer.New(zap.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	n := &podNode{logs: new(consumertest.LogsSink), obs: obs}
	n.clock.Store(time.Now().UnixNano())
	n.r = newGPUMemReceiver(cfg, set)
	n.r.now = func() time.Time { return time.Unix(0, n.clock.Load()) }
	n.r.nextLogs = n.logs
	require.NoError(t, n.r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, n.r.Shutdown(context.Background())) })
	return n
}

func builtinConfig() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = node.Simulated
	cfg.Xid.KmsgPath = ""
	cfg.Runway.Enabled = false
	return cfg
}

// records lists the sink's records of one event.
func records(ld []plog.Logs, event string) []plog.LogRecord {
	var out []plog.LogRecord
	for _, l := range ld {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			lrs := l.ResourceLogs().At(i).ScopeLogs().At(0).LogRecords()
			for j := 0; j < lrs.Len(); j++ {
				if lrs.At(j).EventName() == event {
					out = append(out, lrs.At(j))
				}
			}
		}
	}
	return out
}

// The built-in scenario is a Kubernetes node: the simulated backend serves its pods over the
// kubelet's PodResources API and lays out the kubelet's log directories, so the demo shows
// allocations, pod names on processes, and Ollama (outside Kubernetes) on the notebook's GPU.
func TestSimulatedNodeKnowsItsPods(t *testing.T) {
	n := startPodNode(t, builtinConfig())
	md, err := n.r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	gpus := byGPU(md)
	scn := builtinScenario(t)

	train := gpus[scn.GPUs[0].UUID]["nvidia.gpu.allocation"]
	require.Len(t, train, 1)
	assert.Equal(t, map[string]any{
		"k8s.pod.name": "llm-train-x7k2p", "k8s.namespace.name": "training", "k8s.container.name": "trainer",
		"k8s.pod.uid": scn.Pods[0].UID, "nvidia.gpu.allocation.resource": "nvidia.com/gpu",
		"nvidia.gpu.allocation.device_id": scn.GPUs[0].UUID,
	}, train[0].attrs)
	assert.Equal(t, 1.0, train[0].value)
	mig := gpus[scn.GPUs[7].MIG.Instances[0].UUID]["nvidia.gpu.allocation"]
	require.Len(t, mig, 1, "a MIG instance's allocation is on the instance")
	assert.Equal(t, "nvidia.com/mig-3g.40gb", mig[0].attrs["nvidia.gpu.allocation.resource"])

	for _, p := range gpus[scn.GPUs[3].UUID]["nvidia.gpu.process.memory.usage"] {
		assert.Equal(t, "embed-server-6d8f7c9b5-k2x7w", p.attrs["k8s.pod.name"])
		assert.Equal(t, "serving", p.attrs["k8s.namespace.name"])
		assert.Equal(t, "server", p.attrs["k8s.container.name"])
	}

	unexpected := gpus[scn.GPUs[6].UUID]["nvidia.gpu.process.unexpected.count"]
	assert.ElementsMatch(t, []point{
		{value: 0, attrs: map[string]any{"nvidia.gpu.process.unexpected.reason": "other_pod"}},
		{value: 1, attrs: map[string]any{"nvidia.gpu.process.unexpected.reason": "no_pod"}},
		{value: 0, attrs: map[string]any{"nvidia.gpu.process.unexpected.reason": "allocation_unresolved"}},
	}, unexpected, "Ollama runs outside Kubernetes on the notebook's GPU")
	for _, g := range []int{0, 3, 5} {
		for _, p := range gpus[scn.GPUs[g].UUID]["nvidia.gpu.process.unexpected.count"] {
			assert.Zero(t, p.value, "GPU %d runs only what the kubelet placed there", g)
		}
	}

	recs := records(n.logs.AllLogs(), metadata.LogEventNameProcessUnexpected)
	require.Len(t, recs, 1)
	attrs := recs[0].Attributes().AsRaw()
	assert.Equal(t, int64(46101), attrs["process.pid"])
	assert.Equal(t, "ollama", attrs["process.executable.name"])
	assert.Equal(t, "no_pod", attrs["nvidia.gpu.process.unexpected.reason"])
	assert.Equal(t, int64(18*gib), attrs["nvidia.gpu.process.memory.usage"])
	assert.Equal(t, []any{"research-notebook-0"}, attrs["nvidia.gpu.allocated.k8s.pod.name"])
	assert.Equal(t, []any{"research"}, attrs["nvidia.gpu.allocated.k8s.namespace.name"])
	assert.Equal(t, []any{scn.Pods[5].UID}, attrs["nvidia.gpu.allocated.k8s.pod.uid"])
	assert.Equal(t, plog.SeverityNumberWarn, recs[0].SeverityNumber())
	assert.Contains(t, recs[0].Body().Str(), "pid 46101 (ollama)")
	assert.Contains(t, recs[0].Body().Str(), "research/research-notebook-0")

	// One record per episode: the next scrapes add none.
	n.advance(time.Second)
	_, err = n.r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	assert.Len(t, records(n.logs.AllLogs(), metadata.LogEventNameProcessUnexpected), 1)
}

// A pod allocated a GPU on which none of its processes holds memory: idle_time counts from
// when the receiver first saw the allocation, and restarts when a process of the pod appears.
func TestAllocationIdleTime(t *testing.T) {
	dir := t.TempDir()
	scenario := filepath.Join(dir, "idle.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte(`
gpus:
  - uuid: GPU-aaaaaaaa-0000-4000-8000-000000000000
  - uuid: GPU-bbbbbbbb-0000-4000-8000-000000000000
    processes:
      - {pid: 700, name: python3, pod_uid: 11111111-2222-4333-8444-555555555555, container_id: cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc, memory: 1GiB}
pods:
  - uid: 11111111-2222-4333-8444-555555555555
    name: idle-x2k9q
    namespace: ml
    containers:
      - name: main
        id: cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc
        devices: [{ids: [GPU-aaaaaaaa-0000-4000-8000-000000000000, GPU-bbbbbbbb-0000-4000-8000-000000000000]}]
`), 0o600))
	cfg := builtinConfig()
	cfg.Simulated.Scenario = scenario
	n := startPodNode(t, cfg)
	idle := func() map[string]float64 {
		md, err := n.r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		out := map[string]float64{}
		for id, g := range byGPU(md) {
			for _, p := range g["nvidia.gpu.allocation.idle_time"] {
				out[id] = p.value
			}
		}
		return out
	}
	assert.Equal(t, map[string]float64{"GPU-aaaaaaaa-0000-4000-8000-000000000000": 0, "GPU-bbbbbbbb-0000-4000-8000-000000000000": 0}, idle())
	n.advance(90 * time.Second)
	assert.Equal(t, map[string]float64{"GPU-aaaaaaaa-0000-4000-8000-000000000000": 90, "GPU-bbbbbbbb-0000-4000-8000-000000000000": 0}, idle(),
		"GPU a was never used by its pod; GPU b is")
}

// Without the kubelet's socket everything else works as before: one INFO line, no
// allocations and no unexpected-consumer counts (allocations are unknown, not empty), and
// pod names still come from the pod log directory.
func TestWithoutPodResourcesSocket(t *testing.T) {
	cfg := builtinConfig()
	cfg.Kubernetes.PodResourcesSocket = filepath.Join(t.TempDir(), "absent.sock")
	n := startPodNode(t, cfg)
	for range 3 {
		md, err := n.r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		n.advance(time.Minute)
		for _, g := range byGPU(md) {
			assert.NotContains(t, g, "nvidia.gpu.allocation")
			assert.NotContains(t, g, "nvidia.gpu.process.unexpected.count")
		}
	}
	assert.Equal(t, 1, n.obs.FilterMessageSnippet("pod allocations off until").Len(), "said once")
	assert.Empty(t, records(n.logs.AllLogs(), metadata.LogEventNameProcessUnexpected))
}

// The kubelet of a real node: the receiver's client against the kubelet's gRPC API on a unix
// socket. A process of a pod the GPU was not allocated to is an unexpected consumer
// (other_pod); once the kubelet allocates the GPU to that pod too, it is not.
func TestUnexpectedConsumerOfAnotherPod(t *testing.T) {
	scenario := filepath.Join(t.TempDir(), "stray.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte(`
gpus:
  - uuid: GPU-aaaaaaaa-0000-4000-8000-000000000000
    processes:
      - {pid: 700, name: python3, pod_uid: 11111111-2222-4333-8444-555555555555, container_id: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, memory: 30GiB}
      - {pid: 800, name: jupyter, pod_uid: 99999999-2222-4333-8444-555555555555, container_id: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, memory: 12GiB}
pods:
  - {uid: 11111111-2222-4333-8444-555555555555, name: train-x2k9q, namespace: ml, containers: [{name: main, id: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}]}
  - {uid: 99999999-2222-4333-8444-555555555555, name: debug, namespace: default, containers: [{name: shell, id: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb}]}
`), 0o600))
	sockDir, err := os.MkdirTemp("", "kubelet")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	kubelet := simkubelet.New(simkubelet.Options{})
	require.NoError(t, kubelet.Start(filepath.Join(sockDir, "kubelet.sock")))
	t.Cleanup(kubelet.Stop)
	gpu := simkubelet.Devices{Resource: "nvidia.com/gpu", IDs: []string{"GPU-aaaaaaaa-0000-4000-8000-000000000000"}}
	kubelet.SetPods([]simkubelet.Pod{
		{Namespace: "ml", Name: "train-x2k9q", Containers: []simkubelet.Container{{Name: "main", Devices: []simkubelet.Devices{gpu}}}},
		{Namespace: "default", Name: "debug", Containers: []simkubelet.Container{{Name: "shell"}}},
	})

	cfg := builtinConfig()
	cfg.Simulated.Scenario = scenario
	cfg.Kubernetes.PodResourcesSocket = filepath.Join(sockDir, "kubelet.sock")
	cfg.Kubernetes.PodLogsDir = filepath.Join(t.TempDir(), "pods") // the simulator lays it out
	n := startPodNode(t, cfg)
	count := func() float64 {
		md, err := n.r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		for _, p := range byGPU(md)["GPU-aaaaaaaa-0000-4000-8000-000000000000"]["nvidia.gpu.process.unexpected.count"] {
			if p.attrs["nvidia.gpu.process.unexpected.reason"] == "other_pod" {
				return p.value
			}
		}
		return -1
	}
	assert.Equal(t, 1.0, count())
	recs := records(n.logs.AllLogs(), metadata.LogEventNameProcessUnexpected)
	require.Len(t, recs, 1)
	attrs := recs[0].Attributes().AsRaw()
	assert.Equal(t, "debug", attrs["k8s.pod.name"])
	assert.Equal(t, "shell", attrs["k8s.container.name"])
	assert.Equal(t, []any{"train-x2k9q"}, attrs["nvidia.gpu.allocated.k8s.pod.name"])

	// Time-slicing: the kubelet now gives the debug pod a replica of the same GPU.
	kubelet.SetPods([]simkubelet.Pod{
		{Namespace: "ml", Name: "train-x2k9q", Containers: []simkubelet.Container{{Name: "main", Devices: []simkubelet.Devices{gpu}}}},
		{Namespace: "default", Name: "debug", Containers: []simkubelet.Container{{Name: "shell", Devices: []simkubelet.Devices{
			{Resource: "nvidia.com/gpu.shared", IDs: []string{"GPU-aaaaaaaa-0000-4000-8000-000000000000::1"}}}}}},
	})
	n.advance(cfg.Kubernetes.RefreshInterval)
	assert.Equal(t, 0.0, count(), "scheduled there now")
	assert.Len(t, records(n.logs.AllLogs(), metadata.LogEventNameProcessUnexpected), 1)
}

func builtinScenario(t *testing.T) *simnvml.Scenario {
	t.Helper()
	scn := simnvml.BuiltinScenario()
	require.NotEmpty(t, scn.Pods)
	return scn
}

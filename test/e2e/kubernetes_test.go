//go:build e2e

package e2e

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
)

// The Kubernetes tests run the built distribution as the agent DaemonSet runs it (see
// testdata/kubernetes.yaml.tmpl) against a kubelet PodResources server in this test process:
// the kubelet's own generated gRPC service on a unix socket, serving the pods of the
// scenario. The OOM lines arrive the way a node's logs do: CRI lines under
// <node>/pods/<ns>_<pod>_<uid>/<container>/0.log through file_log's container parser (no pid,
// "GPU 0" inside the pod), Docker json-file lines with only the container id, and an SDK's
// OTLP record with its in-pod pid.

// kubernetesNode is one collector on a scenario of testdata/scenarios/kubernetes.
type kubernetesNode struct {
	*collector
	otlpPort int
}

// startKubernetesNode serves the scenario's pods from a PodResources server (none when
// withKubelet is false: the socket path then names nothing) and starts the collector.
func startKubernetesNode(t *testing.T, scenario string, withKubelet bool) *kubernetesNode {
	t.Helper()
	path := testdata(t, "scenarios", "kubernetes", scenario+".yaml")
	// A unix socket path is limited to 108 bytes: t.TempDir's names are longer.
	sockDir, err := os.MkdirTemp("", "kubelet")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	socket := filepath.Join(sockDir, "kubelet.sock")
	if withKubelet {
		srv := simkubelet.New(simkubelet.Options{})
		srv.SetPods(scenarioPods(t, path))
		require.NoError(t, srv.Start(socket))
		t.Cleanup(srv.Stop)
	}
	port := e2eharness.FreePort(t)
	cfg := renderConfig(t, "kubernetes.yaml.tmpl", struct {
		Scenario, Socket string
		OTLPPort         int
	}{path, socket, port})
	return &kubernetesNode{collector: startCollector(t, cfg), otlpPort: port}
}

// scenarioPods reads a scenario's pods as the kubelet's List answers them.
func scenarioPods(t *testing.T, path string) []simkubelet.Pod {
	t.Helper()
	var scn struct {
		Pods []struct {
			Name, Namespace string
			Containers      []struct {
				Name    string
				Devices []struct {
					Resource string
					IDs      []string `yaml:"ids"`
				}
				Claims []struct {
					Name, Namespace, Driver, Pool string
					Devices                       []string
				}
			}
		}
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &scn))
	var pods []simkubelet.Pod
	for _, p := range scn.Pods {
		pod := simkubelet.Pod{Name: p.Name, Namespace: p.Namespace}
		if pod.Namespace == "" {
			pod.Namespace = "default"
		}
		for _, c := range p.Containers {
			ctr := simkubelet.Container{Name: c.Name}
			for _, d := range c.Devices {
				resource := d.Resource
				if resource == "" {
					resource = "nvidia.com/gpu"
				}
				ctr.Devices = append(ctr.Devices, simkubelet.Devices{Resource: resource, IDs: d.IDs})
			}
			for _, c := range c.Claims {
				claim := simkubelet.Claim{Name: c.Name, Namespace: cmp.Or(c.Namespace, pod.Namespace)}
				for _, dev := range c.Devices {
					claim.Devices = append(claim.Devices, simkubelet.ClaimDevice{
						Driver: cmp.Or(c.Driver, "gpu.nvidia.com"), Pool: cmp.Or(c.Pool, "node"), Device: dev,
					})
				}
				ctr.Claims = append(ctr.Claims, claim)
			}
			pod.Containers = append(pod.Containers, ctr)
		}
		pods = append(pods, pod)
	}
	return pods
}

// sendSDKRecord posts one log record over OTLP/HTTP as an SDK in a pod would: its resource
// names the pod and the process by its pid inside the pod.
func (n *kubernetesNode) sendSDKRecord(t *testing.T, resource map[string]any, body string) {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	require.NoError(t, rl.Resource().Attributes().FromRaw(resource))
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	lr.SetSeverityText("ERROR")
	lr.Body().SetStr(body)
	payload, err := plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()
	require.NoError(t, err)
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/logs", n.otlpPort)
	var resp *http.Response
	e2eharness.WaitFor(t, 30*time.Second, n.collector, "the OTLP receiver to accept", func() bool {
		resp, err = http.Post(url, "application/json", bytes.NewReader(payload))
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// podOOM is what one pod's OOM record must come out as.
type podOOM struct {
	pod, hwID, cause, match string
	evidence                []string // substrings of gpu.oom.evidence
}

// checkPodOOMs waits for the OOM records and checks each pod's against want.
func checkPodOOMs(t *testing.T, c *collector, want []podOOM, match func(record) string) {
	t.Helper()
	logsPath := filepath.Join(c.dir, "logs.jsonl")
	ooms := waitForRecords(t, c, logsPath, 90*time.Second, len(want), "the classified OOM records", isOOM)
	byPod := map[string]record{}
	for _, r := range ooms {
		byPod[match(r)] = r
	}
	for _, w := range want {
		r, ok := byPod[w.pod]
		if !assert.True(t, ok, "an OOM record of %s among %v", w.pod, ooms) {
			continue
		}
		t.Logf("%s: hw.id=%v cause=%v match=%v confidence=%v\n  evidence: %v", w.pod, r.Attrs["hw.id"], r.Attrs["gpu.oom.cause"],
			r.Attrs["gpu.oom.match"], r.Attrs["gpu.oom.confidence"], r.Attrs["gpu.oom.evidence"])
		assert.Equal(t, w.hwID, r.Attrs["hw.id"], "%s: matched GPU", w.pod)
		assert.Equal(t, w.cause, r.Attrs["gpu.oom.cause"], "%s: evidence: %v", w.pod, r.Attrs["gpu.oom.evidence"])
		if w.match != "" {
			assert.Equal(t, w.match, r.Attrs["gpu.oom.match"], "%s: how it was matched", w.pod)
		}
		for _, s := range w.evidence {
			assert.Contains(t, r.Attrs["gpu.oom.evidence"], s, "%s: evidence", w.pod)
		}
	}
}

// podOf names a record's pod from the resource the container parser (or an SDK) gave it, or
// its container id for Docker's logs.
func podOf(r record) string {
	if ns, ok := r.Resource["k8s.namespace.name"].(string); ok {
		return ns + "/" + r.Resource["k8s.pod.name"].(string)
	}
	id, _ := r.Resource["container.id"].(string)
	return "docker:" + id
}

var fourPods = []podOOM{
	{pod: "serving/llm-serve-7d4b9c8f6-x2k9q", hwID: "GPU-a0c4e1d2-3b5f-4a67-8c9d-0e1f2a3b4c50", cause: "workload_too_large", match: "pod"},
	{pod: "research/finetune-5c9d7f8b4-q7w2z", hwID: "GPU-b1d5f2e3-4c6a-4b78-9d0e-1f2a3b4c5d61", cause: "other_tenant", match: "pod",
		evidence: []string{"default/debug-shell", "did not allocate this GPU", "not scheduled here"}},
	{pod: "ml/embedder-6f8d9c7b5-m4n2p", hwID: "GPU-c2e6a3f4-5d7b-4c89-ae1f-2a3b4c5d6e72", cause: "memory_leak", match: "pod"},
	{pod: "research/notebook-0", hwID: "GPU-d3f7b4a5-6e8c-4d9a-bf20-3b4c5d6e7f83", cause: "fragmentation", match: "pod"},
}

// TestKubernetesFourPods: a 4-GPU node, one pod per GPU, each pod's OOM ("GPU 0" inside the
// pod, no pid) matched to its pod's GPU and classified from that GPU's metrics; the stray
// process on GPU 1 is an unexpected consumer; an SDK's record with its in-pod pid is matched
// through process.vpid; the metrics carry the allocations and the pod names.
func TestKubernetesFourPods(t *testing.T) {
	t.Parallel()
	n := startKubernetesNode(t, "four_pods", true)
	checkPodOOMs(t, n.collector, fourPods, podOf)

	n.sendSDKRecord(t, map[string]any{
		"k8s.namespace.name": "research", "k8s.pod.name": "notebook-0", "process.pid": int64(1),
		"service.name": "notebook",
	}, "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call")
	logsPath := filepath.Join(n.dir, "logs.jsonl")
	sdk := waitForRecords(t, n.collector, logsPath, 30*time.Second, 1, "the SDK's OOM record", func(r record) bool {
		return isOOM(r) && r.Resource["service.name"] == "notebook"
	})
	assert.Equal(t, "GPU-d3f7b4a5-6e8c-4d9a-bf20-3b4c5d6e7f83", sdk[0].Attrs["hw.id"], "the pod's pid 1 is its process 4400")
	assert.Equal(t, "vpid", sdk[0].Attrs["gpu.oom.match"])

	unexpected := waitForRecords(t, n.collector, logsPath, 30*time.Second, 1, "the unexpected-consumer record", func(r record) bool {
		return r.EventName == "nvidia.gpu.process.unexpected"
	})
	require.Len(t, unexpected, 1, "one record per episode")
	u := unexpected[0]
	assert.Equal(t, "GPU-b1d5f2e3-4c6a-4b78-9d0e-1f2a3b4c5d61", u.Resource["hw.id"])
	assert.Equal(t, "WARN", u.Severity)
	assert.Equal(t, int64(9300), u.Attrs["process.pid"])
	assert.Equal(t, "debug-shell", u.Attrs["k8s.pod.name"])
	assert.Equal(t, "other_pod", u.Attrs["nvidia.gpu.process.unexpected.reason"])
	assert.Equal(t, []any{"finetune-5c9d7f8b4-q7w2z"}, u.Attrs["nvidia.gpu.allocated.k8s.pod.name"])
	assert.Equal(t, gib(36), u.Attrs["nvidia.gpu.process.memory.usage"])

	n.stop(t)
	points := metricPoints(t, filepath.Join(n.dir, "metrics.jsonl"))
	for _, w := range []struct{ hwID, pod, ns, container string }{
		{"GPU-a0c4e1d2-3b5f-4a67-8c9d-0e1f2a3b4c50", "llm-serve-7d4b9c8f6-x2k9q", "serving", "server"},
		{"GPU-b1d5f2e3-4c6a-4b78-9d0e-1f2a3b4c5d61", "finetune-5c9d7f8b4-q7w2z", "research", "trainer"},
		{"GPU-c2e6a3f4-5d7b-4c89-ae1f-2a3b4c5d6e72", "embedder-6f8d9c7b5-m4n2p", "ml", "embedder"},
		{"GPU-d3f7b4a5-6e8c-4d9a-bf20-3b4c5d6e7f83", "notebook-0", "research", "notebook"},
	} {
		v, ok := latest(points, "nvidia.gpu.allocation", w.hwID, map[string]any{
			"k8s.pod.name": w.pod, "k8s.namespace.name": w.ns, "k8s.container.name": w.container,
			"nvidia.gpu.allocation.resource": "nvidia.com/gpu", "nvidia.gpu.allocation.device_id": w.hwID,
		})
		assert.True(t, ok && v == 1, "allocation of %s to %s/%s", w.hwID, w.ns, w.pod)
		_, ok = latest(points, "nvidia.gpu.process.memory.usage", w.hwID, map[string]any{
			"k8s.pod.name": w.pod, "k8s.namespace.name": w.ns, "k8s.container.name": w.container,
		})
		assert.True(t, ok, "per-process memory on %s names pod %s", w.hwID, w.pod)
	}
	v, ok := latest(points, "nvidia.gpu.process.unexpected.count", "GPU-b1d5f2e3-4c6a-4b78-9d0e-1f2a3b4c5d61",
		map[string]any{"nvidia.gpu.process.unexpected.reason": "other_pod"})
	assert.True(t, ok && v == 1, "one unexpected consumer on GPU 1")
	v, ok = latest(points, "nvidia.gpu.process.unexpected.count", "GPU-a0c4e1d2-3b5f-4a67-8c9d-0e1f2a3b4c50",
		map[string]any{"nvidia.gpu.process.unexpected.reason": "other_pod"})
	assert.True(t, ok && v == 0, "none on GPU 0")
}

// TestKubernetesWithoutPodResources: the same node without the kubelet's socket. One INFO
// line says the source is off; the OOMs still find their GPUs through the pods' processes
// (pod uid from the cgroup, names from the pod log directory), and no allocation is emitted.
func TestKubernetesWithoutPodResources(t *testing.T) {
	t.Parallel()
	n := startKubernetesNode(t, "four_pods", false)
	checkPodOOMs(t, n.collector, fourPods[:1], podOf)
	n.stop(t)
	points := metricPoints(t, filepath.Join(n.dir, "metrics.jsonl"))
	for _, p := range points {
		assert.NotEqual(t, "nvidia.gpu.allocation", p.Metric, "no allocations without PodResources")
	}
	_, ok := latest(points, "nvidia.gpu.process.memory.usage", "GPU-a0c4e1d2-3b5f-4a67-8c9d-0e1f2a3b4c50",
		map[string]any{"k8s.pod.name": "llm-serve-7d4b9c8f6-x2k9q", "k8s.namespace.name": "serving"})
	assert.True(t, ok, "pod names from the pod log directory")
	assert.Equal(t, 1, strings.Count(n.Output(), "pod allocations off until the kubelet's PodResources socket appears"),
		"one line about the missing socket:\n%s", n.Output())
}

// TestKubernetesTwoGPUPodAndDocker: a pod's "GPU 1" is its second GPU in CUDA's order (PCI
// bus order), whatever order the device plugin listed them in; a Docker container's record
// with only its container id finds the container's GPU.
func TestKubernetesTwoGPUPodAndDocker(t *testing.T) {
	t.Parallel()
	n := startKubernetesNode(t, "two_gpu_pod", true)
	checkPodOOMs(t, n.collector, []podOOM{
		{pod: "research/trainer-x8z4w", hwID: "GPU-13d4e5f6-a7b8-4c93-8dae-1f2a3b4c5d63", cause: "workload_too_large", match: "pod_ordinal"},
		{pod: "docker:6e5b9c2d4f7a8b0c1d3e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0", hwID: "GPU-12c3d4e5-f6a7-4b82-9c9d-0e1f2a3b4c52",
			cause: "workload_too_large", match: "container"},
	}, podOf)
}

// TestKubernetesSharedGPUs: a time-sliced replica's OOM blames the other pod the kubelet put
// on the same GPU, and says it was scheduled there; a MIG instance's pod is matched to the
// instance.
func TestKubernetesSharedGPUs(t *testing.T) {
	t.Parallel()
	n := startKubernetesNode(t, "shared", true)
	checkPodOOMs(t, n.collector, []podOOM{
		{pod: "serving/chat-a", hwID: "GPU-20e4f5a6-b7c8-4d90-8eaf-2a3b4c5d6e70", cause: "other_tenant", match: "pod",
			evidence: []string{"serving/chat-b", "allocated"}},
		{pod: "batch/etl-z9x8w", hwID: "MIG-32b7c8d9-eafb-4ac3-9bd2-5d6e7f8a9ba3", cause: "workload_too_large", match: "pod"},
	}, podOf)
	n.stop(t)
	points := metricPoints(t, filepath.Join(n.dir, "metrics.jsonl"))
	for _, pod := range []string{"chat-a", "chat-b"} {
		_, ok := latest(points, "nvidia.gpu.allocation", "GPU-20e4f5a6-b7c8-4d90-8eaf-2a3b4c5d6e70", map[string]any{
			"k8s.pod.name": pod, "nvidia.gpu.allocation.resource": "nvidia.com/gpu.shared",
		})
		assert.True(t, ok, "the time-sliced GPU's allocation to %s", pod)
	}
	_, ok := latest(points, "nvidia.gpu.allocation", "MIG-32b7c8d9-eafb-4ac3-9bd2-5d6e7f8a9ba3", map[string]any{
		"k8s.pod.name": "etl-z9x8w", "nvidia.gpu.allocation.resource": "nvidia.com/mig-3g.40gb",
		"nvidia.gpu.allocation.device_id": "MIG-32b7c8d9-eafb-4ac3-9bd2-5d6e7f8a9ba3",
	})
	assert.True(t, ok, "the MIG instance's allocation, on the instance's resource")
}

// TestKubernetesDRAAndGKE: GPUs the kubelet names by minor number, which is not their index:
// a DRA-allocated pod (NVIDIA's DRA driver, claim train-gpu, device gpu-2 = GPU index 0), two
// pods time-sharing GKE's nvidia0 (GPU index 1), a device-plugin pod and a DRA MIG device.
// Each allocation lands on the right GPU, the DRA pod's OOM is matched through its
// allocation, and only the stray pod is an unexpected consumer; the pod whose claim names a
// GPU the node lacks is counted apart (allocation_unresolved), with one INFO line.
func TestKubernetesDRAAndGKE(t *testing.T) {
	t.Parallel()
	const (
		draGPU    = "GPU-40a1b2c3-d4e5-4f60-8a71-b2c3d4e5f607"
		gkeGPU    = "GPU-41b2c3d4-e5f6-4071-9b82-c3d4e5f60718"
		pluginGPU = "GPU-42c3d4e5-f607-4182-8c93-d4e5f6071829"
		draMIG    = "MIG-54d4e5f6-0718-4293-9da4-e5f60718293c"
	)
	n := startKubernetesNode(t, "dra_gke", true)
	checkPodOOMs(t, n.collector, []podOOM{
		{pod: "ml/dra-train", hwID: draGPU, cause: "workload_too_large", match: "pod"},
	}, podOf)
	logsPath := filepath.Join(n.dir, "logs.jsonl")
	unexpected := waitForRecords(t, n.collector, logsPath, 30*time.Second, 1, "the unexpected-consumer record", func(r record) bool {
		return r.EventName == "nvidia.gpu.process.unexpected"
	})
	n.stop(t)
	require.Len(t, unexpected, 1)
	assert.Equal(t, "stray", unexpected[0].Attrs["k8s.pod.name"])
	assert.Equal(t, pluginGPU, unexpected[0].Resource["hw.id"])

	points := metricPoints(t, filepath.Join(n.dir, "metrics.jsonl"))
	for _, w := range []struct {
		hwID  string
		attrs map[string]any
	}{
		{draGPU, map[string]any{"k8s.pod.name": "dra-train", "nvidia.gpu.allocation.resource": "gpu.nvidia.com",
			"nvidia.gpu.allocation.device_id": "gpu-2", "nvidia.gpu.allocation.claim.name": "train-gpu",
			"nvidia.gpu.allocation.claim.namespace": "ml", "nvidia.gpu.allocation.dra.driver": "gpu.nvidia.com",
			"nvidia.gpu.allocation.dra.pool": "node", "nvidia.gpu.allocation.dra.device": "gpu-2"}},
		{gkeGPU, map[string]any{"k8s.pod.name": "gke-a", "nvidia.gpu.allocation.device_id": "nvidia0/vgpu0"}},
		{gkeGPU, map[string]any{"k8s.pod.name": "gke-b", "nvidia.gpu.allocation.device_id": "nvidia0/vgpu1"}},
		{pluginGPU, map[string]any{"k8s.pod.name": "plugin-infer", "nvidia.gpu.allocation.device_id": pluginGPU}},
		{draMIG, map[string]any{"k8s.pod.name": "dra-mig", "nvidia.gpu.allocation.device_id": "gpu-3-mig-1g10gb-19-2"}},
	} {
		v, ok := latest(points, "nvidia.gpu.allocation", w.hwID, w.attrs)
		assert.True(t, ok && v == 1, "allocation %v on %s", w.attrs, w.hwID)
	}
	for _, w := range []struct {
		hwID, reason string
		want         float64
	}{
		{draGPU, "other_pod", 0}, {gkeGPU, "other_pod", 0}, {draMIG, "other_pod", 0},
		{pluginGPU, "other_pod", 1}, {pluginGPU, "allocation_unresolved", 1},
	} {
		v, ok := latest(points, "nvidia.gpu.process.unexpected.count", w.hwID,
			map[string]any{"nvidia.gpu.process.unexpected.reason": w.reason})
		assert.True(t, ok && v == w.want, "%s %s: %v (found %v)", w.hwID, w.reason, v, ok)
	}
	assert.Equal(t, 1, strings.Count(n.Output(), "no GPU of this node matches"), "one INFO for gpu-9:\n%s", n.Output())
}

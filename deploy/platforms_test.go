package deploy_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// platform is one of the platforms the agent ships a variant for: its kustomize overlay under
// platforms/, the Helm values file layered over values.yaml ("" where values.yaml alone
// fits), and its node fixtures (GPU and CPU nodes, the RuntimeClasses it has) under
// testdata/nodes/.
type platform struct {
	name, helm string
}

var platforms = []platform{
	{name: "gke", helm: "helm/values-gke.yaml"},
	{name: "eks-al2023"},
	{name: "eks-bottlerocket", helm: "helm/values-eks-bottlerocket.yaml"},
	{name: "aks"},
	{name: "gpu-operator", helm: "helm/values-gpu-operator.yaml"},
	{name: "container-toolkit", helm: "helm/values-container-toolkit.yaml"},
}

// GPU Operator's node label that k8s-driver-manager pauses during a driver upgrade
// (NVIDIA/k8s-driver-manager, cmd/driver-manager/main.go @ bd62ca7d: nvidiaGPUClientDeployLabel,
// pausedStr).
const (
	gpuClientDeployLabel = "nvidia.com/gpu.deploy.client"
	pausedForUpgrade     = "paused-for-driver-upgrade"
)

// privileged lists the variants that may run privileged, with the reason.
var privileged = map[string]string{
	"gke": "no NVIDIA runtime adds /dev/nvidia* to the device cgroup; GKE's own DCGM DaemonSet runs privileged",
}

// renderOverlay runs kustomize on platforms/<name>, as `kubectl apply -k` does.
func renderOverlay(t *testing.T, name string) []manifest {
	t.Helper()
	dir := filepath.Join("platforms", name)
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	out, err := res.AsYaml()
	require.NoError(t, err)
	docs, err := decodeAll(strings.NewReader(string(out)))
	require.NoError(t, err)
	var ms []manifest
	for _, d := range docs {
		ms = append(ms, manifest{file: dir, obj: d})
	}
	return ms
}

// mergeValues layers a values file over another the way Helm does: maps merge key by key, a
// null removes the key, anything else (lists included) replaces.
func mergeValues(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		switch {
		case v == nil:
			delete(out, k)
		case bok && ook:
			out[k] = mergeValues(bm, om)
		default:
			out[k] = v
		}
	}
	return out
}

// variantPods is every agent pod a platform's user can apply: the overlay's DaemonSet and the
// Helm values (values.yaml, then the platform's file).
func variantPods(t *testing.T, pl platform) ([]pod, []manifest) {
	t.Helper()
	ms := renderOverlay(t, pl.name)
	agent := podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent"))
	values := loadHelmValues(t)
	source := helmValues
	if pl.helm != "" {
		docs := decodeFile(t, pl.helm)
		require.Len(t, docs, 1, pl.helm)
		values = mergeValues(values, docs[0])
		source += " + " + pl.helm
	}
	hp := helmPod(t, values)
	hp.source = source
	return []pod{agent, hp}, ms
}

type fixtures struct {
	gpu, cpu       []*corev1.Node
	runtimeClasses []string
}

func loadNodes(t *testing.T, name string) fixtures {
	t.Helper()
	var f fixtures
	for _, d := range decodeFile(t, filepath.Join("testdata", "nodes", name+".yaml")) {
		switch str(d, "kind") {
		case "RuntimeClass":
			f.runtimeClasses = append(f.runtimeClasses, str(d, "metadata", "name"))
		case "Node":
			var n corev1.Node
			convert(t, d, &n)
			if strings.HasSuffix(n.Name, "-gpu") {
				f.gpu = append(f.gpu, &n)
			} else {
				f.cpu = append(f.cpu, &n)
			}
		}
	}
	require.NotEmpty(t, f.gpu, "%s: GPU node fixtures", name)
	require.NotEmpty(t, f.cpu, "%s: CPU node fixtures", name)
	return f
}

// convert turns decoded YAML into an API type through JSON, as the API server would read it.
func convert(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, to))
}

// corePod is the pod the DaemonSet controller would create from the view's spec.
func corePod(t *testing.T, p pod) *corev1.Pod {
	t.Helper()
	var spec corev1.PodSpec
	convert(t, p.spec, &spec)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "otelcol-gpumem-agent-x",
			OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "otelcol-gpumem-agent", Controller: ptr(true)}},
		},
		Spec: spec,
	}
}

func ptr[T any](v T) *T { return &v }

// admits is the scheduler's (and the DaemonSet controller's) verdict: the pod's required node
// affinity and nodeSelector match the node, and no NoSchedule or NoExecute taint of the node
// goes untolerated.
func admits(t *testing.T, pod *corev1.Pod, node *corev1.Node) (bool, string) {
	t.Helper()
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	require.NoError(t, err)
	if !ok {
		return false, "node affinity or nodeSelector"
	}
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false)
	if untolerated {
		return false, "taint " + taint.ToString()
	}
	return true, ""
}

// Each platform's variants (overlay and Helm values) run on every GPU node fixture of that
// platform and on none of its CPU nodes, and name only a RuntimeClass the platform has.
func TestPlatformScheduling(t *testing.T) {
	for _, pl := range platforms {
		t.Run(pl.name, func(t *testing.T) {
			pods, ms := variantPods(t, pl)
			f := loadNodes(t, pl.name)
			for _, m := range ms {
				if m.kind() == "RuntimeClass" {
					f.runtimeClasses = append(f.runtimeClasses, m.name())
				}
			}
			for _, p := range pods {
				cp := corePod(t, p)
				for _, n := range f.gpu {
					ok, why := admits(t, cp, n)
					assert.True(t, ok, "%s: GPU node %s rejects the agent (%s)", p.source, n.Name, why)
				}
				for _, n := range f.cpu {
					ok, _ := admits(t, cp, n)
					assert.False(t, ok, "%s: CPU node %s admits the agent", p.source, n.Name)
				}
				if rc := cp.Spec.RuntimeClassName; rc != nil && *rc != "" {
					assert.Contains(t, f.runtimeClasses, *rc, "%s: RuntimeClass %s does not exist on %s", p.source, *rc, pl.name)
				}
			}
		})
	}
}

// Every variant keeps the base's invariants: host pid namespace, the pipeline and mounts of
// the base, read-only host paths, no capability but SYSLOG; privileged only where listed.
func TestPlatformVariantsKeepInvariants(t *testing.T) {
	ms := loadManifests(t)
	base := podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent"))
	for _, pl := range platforms {
		pods, _ := variantPods(t, pl)
		for _, p := range pods {
			assert.Equal(t, true, p.spec["hostPID"], "%s: hostPID", p.source)
			assert.Equal(t, base.config, p.config, "%s: the base's collector configuration", p.source)
			for _, bv := range base.volumes {
				if bv["name"] == "config" && bv["configMap"] != nil && strings.HasPrefix(p.source, helmValues) {
					continue // the chart mounts its own ConfigMap (helmPod)
				}
				assert.NotNil(t, byName(listAt(p.spec, "volumes"), str(bv, "name")), "%s: drops volume %s", p.source, bv["name"])
			}
			for _, e := range maps(listAt(base.container, "env")) {
				if e["name"] != "MY_POD_IP" && e["name"] != "GOMEMLIMIT" {
					assert.NotNil(t, byName(listAt(p.container, "env"), str(e, "name")), "%s: drops env %s", p.source, e["name"])
				}
			}
			for _, v := range p.volumes {
				if v["hostPath"] == nil {
					continue
				}
				m := byName(listAt(p.container, "volumeMounts"), str(v, "name"))
				require.NotNil(t, m, "%s: hostPath %s not mounted", p.source, v["name"])
				if str(m, "mountPath") != "/var/lib/otelcol-gpumem" {
					assert.Equal(t, true, m["readOnly"], "%s: %s readOnly", p.source, v["name"])
				}
			}
			sc := mapAt(p.container, "securityContext")
			assert.Equal(t, []string{"SYSLOG"}, strs(sc, "capabilities", "add"), p.source)
			if reason, ok := privileged[pl.name]; ok {
				assert.Equal(t, true, sc["privileged"], "%s: privileged (%s)", p.source, reason)
				// The API rejects privileged with allowPrivilegeEscalation false.
				assert.Equal(t, true, sc["allowPrivilegeEscalation"], "%s", p.source)
			} else {
				assert.NotEqual(t, true, sc["privileged"], "%s: privileged", p.source)
				assert.Equal(t, false, sc["allowPrivilegeEscalation"], "%s", p.source)
			}
		}
	}
}

// GKE: the host driver directory is mounted where gpu_mem.library_path points.
func TestGKELibraryPath(t *testing.T) {
	pods, _ := variantPods(t, platform{name: "gke", helm: "helm/values-gke.yaml"})
	for _, p := range pods {
		lib, ok := p.envValue("NVML_LIBRARY_PATH")
		require.True(t, ok, "%s: NVML_LIBRARY_PATH", p.source)
		assert.Equal(t, "${env:NVML_LIBRARY_PATH:-}", str(p.config, "receivers", "gpu_mem", "library_path"), p.source)
		mount, vol := p.mountFor("/home/kubernetes/bin/nvidia")
		require.NotNil(t, mount, "%s: the GKE driver directory is not mounted", p.source)
		assert.Equal(t, "Directory", str(vol, "hostPath", "type"), p.source)
		assert.True(t, under(lib, str(mount, "mountPath")), "%s: %s is outside the driver mount", p.source, lib)
	}
}

// Bottlerocket: every GPU requested the volume-mounts way, /dev/null under the toolkit's root.
func TestBottlerocketDeviceListMount(t *testing.T) {
	pods, _ := variantPods(t, platform{name: "eks-bottlerocket", helm: "helm/values-eks-bottlerocket.yaml"})
	for _, p := range pods {
		mount, vol := p.mountFor("/dev/null")
		require.NotNil(t, mount, "%s: no /dev/null device-list mount", p.source)
		assert.Equal(t, "/var/run/nvidia-container-devices/all", str(mount, "mountPath"), p.source)
		assert.Equal(t, "CharDevice", str(vol, "hostPath", "type"), p.source)
	}
}

// A GPU Operator driver upgrade, with the driver manager's own selectors: while
// nvidia.com/gpu.deploy.client is "true" the agent runs and WaitForPodsWithNodeSelector counts
// it; once evictAllGPUOperatorComponents sets "paused-for-driver-upgrade" the node no longer
// admits it (so the DaemonSet controller deletes it and the wait ends); after
// rescheduleGPUOperatorComponents sets "true" it is admitted again.
func TestGPUOperatorDriverUpgrade(t *testing.T) {
	pods, _ := variantPods(t, platform{name: "gpu-operator", helm: "helm/values-gpu-operator.yaml"})
	f := loadNodes(t, "gpu-operator")
	for _, p := range pods {
		cp := corePod(t, p)
		for _, n := range f.gpu {
			require.Equal(t, "true", n.Labels[gpuClientDeployLabel], "%s: the operator's label", n.Name)
			ok, why := admits(t, cp, n)
			assert.True(t, ok, "%s: before the upgrade (%s)", p.source, why)
			assert.True(t, countedByDriverManager(cp), "%s: WaitForPodsWithNodeSelector must wait for the agent", p.source)

			paused := n.DeepCopy()
			paused.Labels[gpuClientDeployLabel] = pausedForUpgrade
			ok, _ = admits(t, cp, paused)
			assert.False(t, ok, "%s: a paused node must not keep the agent (it holds NVML open)", p.source)

			resumed := paused.DeepCopy()
			resumed.Labels[gpuClientDeployLabel] = "true"
			ok, why = admits(t, cp, resumed)
			assert.True(t, ok, "%s: after the upgrade (%s)", p.source, why)
		}
	}
}

// countedByDriverManager is WaitForPodsWithNodeSelector's predicate (NVIDIA/k8s-driver-manager,
// internal/kubernetes/client.go @ bd62ca7d): a pod whose controller is a DaemonSet and whose
// spec.nodeSelector has the key. Node affinity does not count.
func countedByDriverManager(p *corev1.Pod) bool {
	owner := metav1.GetControllerOf(p)
	if owner == nil || owner.Kind != "DaemonSet" {
		return false
	}
	_, ok := p.Spec.NodeSelector[gpuClientDeployLabel]
	return ok
}

// The predicate above is not vacuous: the base agent (no nodeSelector) is not counted, and a
// node with no gpu.deploy.client label admits no GPU Operator variant.
func TestGPUOperatorSelectorsDiscriminate(t *testing.T) {
	ms := loadManifests(t)
	base := corePod(t, podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent")))
	assert.False(t, countedByDriverManager(base))
	pods, _ := variantPods(t, platform{name: "gpu-operator", helm: "helm/values-gpu-operator.yaml"})
	n := loadNodes(t, "gpu-operator").gpu[0].DeepCopy()
	delete(n.Labels, gpuClientDeployLabel)
	for _, p := range pods {
		ok, _ := admits(t, corePod(t, p), n)
		assert.False(t, ok, p.source)
	}
}

// Every platform has an overlay, a fixture file, and (where it has one) its Helm values file,
// and nothing under platforms/ or testdata/nodes/ is left out of the list.
func TestPlatformsListed(t *testing.T) {
	var names []string
	for _, pl := range platforms {
		names = append(names, pl.name)
	}
	dirs, err := filepath.Glob("platforms/*")
	require.NoError(t, err)
	nodes, err := filepath.Glob("testdata/nodes/*.yaml")
	require.NoError(t, err)
	helm, err := filepath.Glob("helm/values-*.yaml")
	require.NoError(t, err)
	assert.Len(t, dirs, len(names))
	assert.Len(t, nodes, len(names))
	for _, d := range dirs {
		assert.True(t, slices.Contains(names, filepath.Base(d)), "%s is not in platforms", d)
	}
	for _, n := range nodes {
		assert.True(t, slices.Contains(names, strings.TrimSuffix(filepath.Base(n), ".yaml")), "%s is not in platforms", n)
	}
	for _, h := range helm {
		assert.True(t, slices.ContainsFunc(platforms, func(pl platform) bool { return pl.helm == h }), "%s is not in platforms", h)
	}
}

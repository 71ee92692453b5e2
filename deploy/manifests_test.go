package deploy_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every object is a well-formed, namespaced Kubernetes object, and no two share kind and name.
func TestManifestsAreWellFormed(t *testing.T) {
	seen := map[string]string{}
	for _, m := range loadManifests(t) {
		if m.kind() == "Kustomization" {
			continue
		}
		assert.NotEmpty(t, str(m.obj, "apiVersion"), "%s: apiVersion", m)
		assert.NotEmpty(t, m.kind(), "%s: kind", m)
		assert.NotEmpty(t, m.name(), "%s: metadata.name", m)
		if m.kind() != "Namespace" {
			assert.Equal(t, namespace, str(m.obj, "metadata", "namespace"), "%s: namespace", m)
		}
		key := m.kind() + "/" + m.name()
		assert.Empty(t, seen[key], "%s: also defined in %s", m, seen[key])
		seen[key] = m.file
	}
}

// kustomization.yaml lists exactly the manifest files of the directory.
func TestKustomizationResources(t *testing.T) {
	k := find(t, loadManifests(t), "Kustomization", "")
	listed := strs(k.obj, "resources")
	require.NotEmpty(t, listed)
	for _, r := range listed {
		_, err := os.Stat(filepath.Join(kubeDir, r))
		assert.NoError(t, err, "kustomization resource %s", r)
	}
	files, err := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	require.NoError(t, err)
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			assert.Contains(t, listed, b, "%s is not listed in kustomization.yaml", b)
		}
	}
	assert.Equal(t, namespace, str(k.obj, "namespace"))
}

// allPods is every collector pod: the two workloads and the Helm chart's agent.
func allPods(t *testing.T) []pod {
	t.Helper()
	ms := loadManifests(t)
	ws := workloads(ms)
	require.Len(t, ws, 2, "the agent DaemonSet and the gateway Deployment")
	var pods []pod
	for _, w := range ws {
		pods = append(pods, podOf(t, ms, w))
	}
	return append(pods, helmPod(t, loadHelmValues(t)))
}

func agentPods(t *testing.T) []pod {
	t.Helper()
	ms := loadManifests(t)
	return []pod{podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent")), helmPod(t, loadHelmValues(t))}
}

// The host's /proc is mounted where processes.proc_root says, /dev/kmsg where xid.kmsg_path
// says, and /var/log/pods where the file_log globs look.
func TestAgentMountsMatchConfig(t *testing.T) {
	for _, p := range agentPods(t) {
		gpu := mapAt(p.config, "receivers", "gpu_mem")
		require.NotNil(t, gpu, "%s: gpu_mem receiver", p.source)

		// In the host's pid namespace the container's own /proc is the host's procfs: NVML's
		// pids resolve there, and a hostPath mount of /proc would only duplicate it.
		assert.Equal(t, true, p.spec["hostPID"], "%s: hostPID", p.source)
		assert.Equal(t, true, get(gpu, "processes", "enabled"), p.source)
		assert.Equal(t, "/proc", str(gpu, "processes", "proc_root"), "%s: proc_root", p.source)
		mount, vol := p.mountFor("/proc")
		assert.Nil(t, vol, "%s: with hostPID the host's /proc needs no hostPath volume", p.source)

		mount, vol = p.mountFor("/dev/kmsg")
		require.NotNil(t, mount, "%s: /dev/kmsg not mounted", p.source)
		assert.Equal(t, "CharDevice", str(vol, "hostPath", "type"), p.source)
		assert.Equal(t, str(mount, "mountPath"), str(gpu, "xid", "kmsg_path"), "%s: kmsg_path", p.source)

		mount, _ = p.mountFor("/var/log/pods")
		require.NotNil(t, mount, "%s: /var/log/pods not mounted", p.source)
		include := strs(p.config, "receivers", "file_log", "include")
		require.NotEmpty(t, include, "%s: file_log.include", p.source)
		for _, g := range include {
			assert.True(t, strings.HasPrefix(g, str(mount, "mountPath")+"/"), "%s: %s is outside the mount", p.source, g)
		}
		ops := maps(listAt(p.config, "receivers", "file_log", "operators"))
		require.NotEmpty(t, ops, p.source)
		assert.Equal(t, "container", ops[0]["type"], "%s: first operator parses the CRI format", p.source)
		assert.Equal(t, true, get(p.config, "receivers", "file_log", "include_file_path"), "%s: the container parser needs log.file.path", p.source)
	}
}

// The kubelet's PodResources socket is reached through a read-only mount of its directory
// (not of the socket file, which the kubelet recreates on restart) where
// kubernetes.pod_resources_socket says; pod_logs_dir is the /var/log/pods mount and the
// kubelet's container symlinks are mounted read-only beside it, where the receiver looks for
// them (the sibling "containers" directory). The socket is root-owned 0660 or stricter, so the
// agent that connects runs as uid 0.
func TestAgentKubernetesMounts(t *testing.T) {
	for _, p := range agentPods(t) {
		k8s := mapAt(p.config, "receivers", "gpu_mem", "kubernetes")
		require.NotNil(t, k8s, "%s: gpu_mem.kubernetes", p.source)

		mount, vol := p.mountFor("/var/lib/kubelet/pod-resources")
		require.NotNil(t, mount, "%s: the PodResources directory is not mounted", p.source)
		assert.Equal(t, true, mount["readOnly"], "%s: PodResources mount readOnly", p.source)
		assert.Equal(t, "DirectoryOrCreate", str(vol, "hostPath", "type"), "%s: PodResources hostPath type", p.source)
		socket := str(k8s, "pod_resources_socket")
		assert.Equal(t, str(mount, "mountPath"), filepath.Dir(socket), "%s: pod_resources_socket is in the mounted directory", p.source)
		assert.Equal(t, "kubelet.sock", filepath.Base(socket), p.source)
		for _, v := range p.volumes {
			assert.False(t, strings.HasSuffix(str(v, "hostPath", "path"), ".sock"), "%s: %s mounts a socket file; mount its directory", p.source, v["name"])
		}
		assert.Equal(t, 0, get(p.spec, "securityContext", "runAsUser"), "%s: the PodResources socket is root's", p.source)

		mount, vol = p.mountFor("/var/log/pods")
		require.NotNil(t, mount, p.source)
		assert.Equal(t, true, mount["readOnly"], "%s: /var/log/pods readOnly", p.source)
		assert.Equal(t, "Directory", str(vol, "hostPath", "type"), p.source)
		logs := str(k8s, "pod_logs_dir")
		assert.Equal(t, str(mount, "mountPath"), logs, "%s: pod_logs_dir", p.source)

		mount, vol = p.mountFor("/var/log/containers")
		require.NotNil(t, mount, "%s: /var/log/containers is not mounted", p.source)
		assert.Equal(t, true, mount["readOnly"], "%s: /var/log/containers readOnly", p.source)
		assert.Equal(t, "Directory", str(vol, "hostPath", "type"), p.source)
		assert.Equal(t, filepath.Join(filepath.Dir(logs), "containers"), str(mount, "mountPath"), "%s: the receiver reads the symlinks beside pod_logs_dir", p.source)

		interval, err := time.ParseDuration(str(k8s, "refresh_interval"))
		require.NoError(t, err, "%s: refresh_interval", p.source)
		assert.GreaterOrEqual(t, interval, time.Second, "%s: PodResources List at most once a second", p.source)
	}
}

// Liveness and readiness probes each call a health_check extension the service enables. In
// the component-status form (an http section, which needs the feature gate in the container's
// args) readiness asks the status of one that counts recoverable errors (gpu_mem without NVML)
// and liveness one that does not: a restart brings no driver back. In the legacy form both
// call "/".
func TestProbesHitHealthCheck(t *testing.T) {
	for _, p := range allPods(t) {
		for _, probe := range []string{"livenessProbe", "readinessProbe"} {
			port := probePort(p, probe)
			id, hc := healthCheckOn(t, p, port)
			require.NotNil(t, hc, "%s: %s: no health_check extension on port %s", p.source, probe, port)
			assert.Contains(t, strs(p.config, "service", "extensions"), id, p.source)
			path := str(p.container, probe, "httpGet", "path")
			if mapAt(hc, "http") == nil {
				assert.Equal(t, "/", path, "%s: %s path", p.source, probe)
				continue
			}
			assert.Contains(t, strs(p.container, "args"), "--feature-gates=+extension.healthcheck.useComponentStatus", p.source)
			assert.Equal(t, true, get(hc, "http", "status", "enabled"), "%s: %s", p.source, id)
			assert.Equal(t, str(hc, "http", "status", "path"), path, "%s: %s path", p.source, probe)
			recoverable := get(hc, "component_health", "include_recoverable_errors") == true
			assert.Equal(t, probe == "readinessProbe", recoverable, "%s: %s counts recoverable errors only for readiness", p.source, id)
		}
	}
}

// healthCheckOn finds the health_check extension (legacy endpoint or http.endpoint) on port.
func healthCheckOn(t *testing.T, p pod, port string) (string, map[string]any) {
	t.Helper()
	for id, v := range mapAt(p.config, "extensions") {
		hc, ok := v.(map[string]any)
		if !ok || (id != "health_check" && !strings.HasPrefix(id, "health_check/")) {
			continue
		}
		ep := str(hc, "endpoint")
		if mapAt(hc, "http") != nil {
			ep = str(hc, "http", "endpoint")
		}
		got, err := portOf(ep)
		require.NoError(t, err, "%s: %s endpoint", p.source, id)
		if got == port {
			return id, hc
		}
	}
	return "", nil
}

// portOf returns the port of a collector endpoint; the host part may be an ${env:...} reference,
// which net.SplitHostPort rejects for its colon.
func portOf(endpoint string) (string, error) {
	i := strings.LastIndexByte(endpoint, ':')
	if i < 0 {
		return "", fmt.Errorf("endpoint %q has no port", endpoint)
	}
	port := endpoint[i+1:]
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("endpoint %q: port: %w", endpoint, err)
	}
	return port, nil
}

// probePort resolves a probe's httpGet port, numeric or named, to a number.
func probePort(p pod, probe string) string {
	switch v := get(p.container, probe, "httpGet", "port").(type) {
	case int:
		return strconv.Itoa(v)
	case string:
		if cp := byName(listAt(p.container, "ports"), v); cp != nil {
			return fmt.Sprint(cp["containerPort"])
		}
	}
	return ""
}

// Requests and limits are set for CPU and memory; GOMEMLIMIT, where set, is below the limit.
func TestResources(t *testing.T) {
	for _, p := range allPods(t) {
		for _, kind := range []string{"requests", "limits"} {
			for _, r := range []string{"cpu", "memory"} {
				assert.NotNil(t, get(p.container, "resources", kind, r), "%s: resources.%s.%s", p.source, kind, r)
			}
		}
		limit, err := bytesOf(fmt.Sprint(get(p.container, "resources", "limits", "memory")))
		require.NoError(t, err, p.source)
		if v, ok := p.envValue("GOMEMLIMIT"); ok {
			soft, err := bytesOf(v)
			require.NoError(t, err, "%s: GOMEMLIMIT", p.source)
			assert.Less(t, soft, limit, "%s: GOMEMLIMIT must leave headroom under the memory limit", p.source)
		}
	}
}

// bytesOf parses the binary-suffixed sizes of Kubernetes (Mi) and Go (MiB).
func bytesOf(s string) (int64, error) {
	for i, suf := range []string{"Ki", "Mi", "Gi"} {
		if n, ok := strings.CutSuffix(strings.TrimSuffix(s, "B"), suf); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			return v << (10 * (i + 1)), err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// Every ${env:X} a configuration uses without a default is defined on its container.
func TestConfigEnvVarsDefined(t *testing.T) {
	for _, p := range allPods(t) {
		refs := envRefs(p.config)
		require.NotEmpty(t, refs, p.source)
		for _, name := range refs {
			_, ok := p.envValue(name)
			assert.True(t, ok, "%s: config uses ${env:%s}, which the container does not set", p.source, name)
		}
	}
}

// host.name comes from the node name (the downward API) through host_identity, one id in both
// pipelines, set before oom_classifier sees the data, and oom_classifier sits in both
// pipelines of every collector.
func TestPipelines(t *testing.T) {
	for _, p := range agentPods(t) {
		e := byName(listAt(p.container, "env"), "K8S_NODE_NAME")
		require.NotNil(t, e, p.source)
		assert.Equal(t, "spec.nodeName", str(e, "valueFrom", "fieldRef", "fieldPath"), p.source)
		assert.Equal(t, "${env:K8S_NODE_NAME}", get(p.config, "processors", "host_identity", "host_name"), p.source)
		assert.Nil(t, get(p.config, "processors", "resource"), "%s: host.name is host_identity's, not a resource step's", p.source)
		for _, sig := range []string{"metrics", "logs"} {
			assert.Contains(t, strs(p.config, "service", "pipelines", sig, "processors"), "host_identity", "%s: %s", p.source, sig)
		}
		assert.Equal(t, []string{"gpu_mem"}, strs(p.config, "service", "pipelines", "metrics", "receivers"), p.source)
		assert.True(t, hasAll(strs(p.config, "service", "pipelines", "logs", "receivers"), "gpu_mem", "file_log"), p.source)
	}
	for _, p := range allPods(t) {
		for _, sig := range []string{"metrics", "logs"} {
			procs := strs(p.config, "service", "pipelines", sig, "processors")
			oom := slices.Index(procs, "oom_classifier")
			assert.GreaterOrEqual(t, oom, 0, "%s: %s pipeline lacks oom_classifier", p.source, sig)
			if r := slices.Index(procs, "host_identity"); r >= 0 {
				assert.Less(t, r, oom, "%s: %s: host_identity must set host.name before oom_classifier", p.source, sig)
			}
			assert.Equal(t, "memory_limiter", procs[0], "%s: %s: memory_limiter first", p.source, sig)
		}
	}
}

// The agents' gateway endpoint is the gateway Service, on a port that reaches the gateway's
// OTLP/gRPC receiver.
func TestAgentReachesGateway(t *testing.T) {
	ms := loadManifests(t)
	agent := podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent"))
	gw := find(t, ms, "Deployment", "otelcol-gpumem-gateway")
	gwPod := podOf(t, ms, gw)
	svc := find(t, ms, "Service", "otelcol-gpumem-gateway")

	ep, ok := agent.envValue("OTELCOL_GATEWAY_ENDPOINT")
	require.True(t, ok)
	host, port, err := net.SplitHostPort(ep)
	require.NoError(t, err)
	assert.Equal(t, svc.name()+"."+namespace+".svc", host)

	for k, v := range mapAt(svc.obj, "spec", "selector") {
		assert.Equal(t, v, get(gw.obj, "spec", "template", "metadata", "labels", k), "Service selector %s", k)
	}
	sp := byName(listAt(svc.obj, "spec", "ports"), "otlp-grpc")
	require.NotNil(t, sp)
	assert.Equal(t, port, fmt.Sprint(sp["port"]))
	cp := byName(listAt(gwPod.container, "ports"), str(sp, "targetPort"))
	require.NotNil(t, cp, "Service targetPort %v", sp["targetPort"])
	rport, err := portOf(str(gwPod.config, "receivers", "otlp", "protocols", "grpc", "endpoint"))
	require.NoError(t, err)
	assert.Equal(t, rport, fmt.Sprint(cp["containerPort"]))

	helmEP := byName(listAt(loadHelmValues(t), "extraEnvs"), "OTELCOL_GATEWAY_ENDPOINT")
	assert.Equal(t, ep, str(helmEP, "value"), "Helm values and DaemonSet send to the same gateway")
}

// The agent runs on GPU nodes only (which nodes each platform's labels admit:
// TestPlatformScheduling), tolerates their taint, and asks the NVIDIA runtime for every GPU's
// NVML without requesting a GPU. The Helm values select the same nodes as the DaemonSet.
func TestAgentScheduling(t *testing.T) {
	ms := loadManifests(t)
	ds := podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent"))
	for _, p := range agentPods(t) {
		assert.NotNil(t, mapAt(p.spec, "affinity", "nodeAffinity"), "%s: GPU node affinity", p.source)
		assert.Equal(t, get(ds.spec, "affinity"), get(p.spec, "affinity"), "%s: the DaemonSet's node affinity", p.source)
		assert.Equal(t, get(ds.spec, "tolerations"), get(p.spec, "tolerations"), "%s: the DaemonSet's tolerations", p.source)
		var tolerated bool
		for _, tol := range maps(listAt(p.spec, "tolerations")) {
			tolerated = tolerated || (tol["key"] == "nvidia.com/gpu" && tol["effect"] == "NoSchedule")
		}
		assert.True(t, tolerated, "%s: nvidia.com/gpu NoSchedule toleration", p.source)
		v, _ := p.envValue("NVIDIA_VISIBLE_DEVICES")
		assert.Equal(t, "all", v, p.source)
		v, _ = p.envValue("NVIDIA_DRIVER_CAPABILITIES")
		assert.Equal(t, "utility", v, p.source)
		assert.Nil(t, get(p.container, "resources", "limits", "nvidia.com/gpu"), "%s: must not take a GPU from workloads", p.source)
	}
}

// The Helm values run the same agent pipeline as the ConfigMap, the same binary and image.
func TestHelmValuesMatchManifests(t *testing.T) {
	ms := loadManifests(t)
	agent := podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent"))
	values := loadHelmValues(t)
	hp := helmPod(t, values)

	assert.Equal(t, "daemonset", str(values, "mode"))
	for _, section := range []string{"receivers", "processors", "exporters", "extensions"} {
		assert.Equal(t, agent.config[section], hp.config[section], "config.%s", section)
	}
	for _, sig := range []string{"metrics", "logs"} {
		assert.Equal(t, get(agent.config, "service", "pipelines", sig), get(hp.config, "service", "pipelines", sig), "pipeline %s", sig)
	}
	assert.Equal(t, []string{"logs", "metrics"}, sortedKeys(mapAt(hp.config, "service", "pipelines")), "no other pipeline survives the chart's defaults")
	assert.Equal(t, get(agent.config, "service", "telemetry"), get(hp.config, "service", "telemetry"), "service.telemetry (the alerts read it)")
	assert.Equal(t, get(agent.config, "service", "extensions"), get(hp.config, "service", "extensions"), "service.extensions (auth_retry among them)")
	// The chart's default receivers this distribution lacks must be removed.
	for _, r := range []string{"jaeger", "zipkin", "prometheus"} {
		v, ok := mapAt(values, "config", "receivers")[r]
		assert.True(t, ok && v == nil, "config.receivers.%s must be null", r)
	}

	cmd := strs(agent.container, "command")
	require.Len(t, cmd, 1)
	assert.Equal(t, "/"+str(values, "command", "name"), cmd[0], "the chart runs /<command.name>")
	image, _, _ := strings.Cut(str(agent.container, "image"), ":")
	assert.Equal(t, image, str(values, "image", "repository"))
	assert.Equal(t, get(agent.container, "securityContext"), get(values, "securityContext"))
	assert.Equal(t, get(agent.container, "resources"), get(values, "resources"))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

package deploy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// No pod is privileged or may gain privileges; all capabilities are dropped and SYSLOG is the
// only one ever added; the root filesystem is read-only; no host network or IPC namespace is
// shared (the agent's pid namespace: TestHostPIDOnlyWhereNVMLNeedsIt).
func TestSecurityContext(t *testing.T) {
	for _, p := range allPods(t) {
		sc := mapAt(p.container, "securityContext")
		require.NotNil(t, sc, "%s: container securityContext", p.source)
		assert.NotEqual(t, true, sc["privileged"], "%s: privileged", p.source)
		assert.Equal(t, false, sc["allowPrivilegeEscalation"], "%s: allowPrivilegeEscalation must be false", p.source)
		assert.Equal(t, true, sc["readOnlyRootFilesystem"], "%s: readOnlyRootFilesystem", p.source)
		assert.Equal(t, []string{"ALL"}, strs(sc, "capabilities", "drop"), "%s: capabilities.drop", p.source)
		for _, c := range strs(sc, "capabilities", "add") {
			assert.Equal(t, "SYSLOG", c, "%s: only SYSLOG may be added", p.source)
		}
		for _, host := range []string{"hostIPC", "hostNetwork"} {
			assert.NotEqual(t, true, p.spec[host], "%s: %s", p.source, host)
		}
		assert.Equal(t, "RuntimeDefault", str(p.spec, "securityContext", "seccompProfile", "type"), "%s: seccomp", p.source)
	}
}

// The agent reads the kernel log: it adds SYSLOG (and nothing else), which is only effective
// for uid 0 (Kubernetes sets no ambient capabilities), so it must not claim runAsNonRoot.
func TestAgentUserMatchesCapabilities(t *testing.T) {
	for _, p := range agentPods(t) {
		assert.Equal(t, []string{"SYSLOG"}, strs(p.container, "securityContext", "capabilities", "add"), p.source)
		psc := mapAt(p.spec, "securityContext")
		assert.Equal(t, 0, psc["runAsUser"], "%s: runAsUser", p.source)
		assert.NotEqual(t, true, psc["runAsNonRoot"], "%s: runAsNonRoot contradicts runAsUser 0", p.source)
	}
}

// The gateway touches nothing on the host: non-root, no capabilities, no hostPath.
func TestGatewayIsUnprivileged(t *testing.T) {
	ms := loadManifests(t)
	p := podOf(t, ms, find(t, ms, "Deployment", "otelcol-gpumem-gateway"))
	assert.Equal(t, true, get(p.spec, "securityContext", "runAsNonRoot"))
	assert.Empty(t, strs(p.container, "securityContext", "capabilities", "add"))
	for _, v := range p.volumes {
		assert.Nil(t, v["hostPath"], "gateway volume %s", v["name"])
	}
}

// Every hostPath volume is mounted read-only, but for the one that holds the file_storage
// directory (the disk queue), which is the only place the agent writes on the host.
func TestHostPathsReadOnly(t *testing.T) {
	for _, p := range allPods(t) {
		storage := storageDirs(p.config)
		for _, v := range p.volumes {
			if v["hostPath"] == nil {
				continue
			}
			m := byName(listAt(p.container, "volumeMounts"), str(v, "name"))
			require.NotNil(t, m, "%s: hostPath volume %s is not mounted", p.source, v["name"])
			if m["readOnly"] == true {
				continue
			}
			var holdsQueue bool
			for _, d := range storage {
				holdsQueue = holdsQueue || under(d, str(m, "mountPath"))
			}
			assert.True(t, holdsQueue, "%s: %s must be mounted readOnly (only the file_storage directory may be written)", p.source, v["name"])
			assert.Equal(t, "DirectoryOrCreate", str(v, "hostPath", "type"), "%s: %s", p.source, v["name"])
		}
	}
}

// The NVIDIA driver reports the pids NVML returns in the caller's pid namespace and leaves out
// the processes the caller cannot see (NVIDIA/open-gpu-kernel-modules,
// src/nvidia/src/kernel/gpu/gpu_rmapi.c, _gpuConvertPid -> osFindNsPid, pid_vnr() on Linux).
// So every agent must run in the host's pid namespace to see any workload's process. The
// gateway calls no NVML and must stay in its own.
func TestHostPIDOnlyWhereNVMLNeedsIt(t *testing.T) {
	for _, p := range agentPods(t) {
		assert.Equal(t, true, p.spec["hostPID"], "%s: hostPID: NVML lists only the processes of the agent's pid namespace", p.source)
	}
	ms := loadManifests(t)
	gw := podOf(t, ms, find(t, ms, "Deployment", "otelcol-gpumem-gateway"))
	assert.NotEqual(t, true, gw.spec["hostPID"], "gateway: no NVML, no reason to see host processes")
}

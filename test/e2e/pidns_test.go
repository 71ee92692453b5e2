//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
	"github.com/gpumem/otelcol-gpumem/test/fakenvml"
)

// The PID namespace tests run the stand-in library in its driver mode (fakenvml.HostProcEnv):
// the scenario lists host pids of real processes and the library answers each in the
// collector's namespace, or not at all, as the NVIDIA driver does since 535.113.01.

// gate turns on the health check's component status.
const gate = "--feature-gates=+extension.healthcheck.useComponentStatus"

const gpuH = "GPU-77777777-1111-2222-3333-444444444444"

// hostProc mounts a procfs of the test's (the host's) PID namespace at a fresh directory: it
// stays the host's inside a child namespace started after it.
func hostProc(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a procfs and unshare --pid need root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "proc", "proc", dir).CombinedOutput()
	require.NoError(t, err, "mount a procfs: %s", out)
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

func hiddenScenario(pids []int) fakenvml.Scenario {
	const gib = 1 << 30
	var procs []string
	for i, p := range pids {
		procs = append(procs, fmt.Sprintf("%d:%d", p, (i+1)*gib))
	}
	return fakenvml.Scenario{}.Set("driver_version", "550.54.15").Set("gpu_count", 1).
		GPU(0, "uuid", gpuH).GPU(0, "name", "NVIDIA H100 80GB HBM3").GPU(0, "bus_id", "00000000:3B:00.0").
		GPU(0, "mem.total", 80*gib).GPU(0, "mem.free", 60*gib).GPU(0, "mem.used", 20*gib).
		GPU(0, "mem2.total", 80*gib).GPU(0, "mem2.reserved", 1*gib).GPU(0, "mem2.used", 19*gib).
		GPU(0, "procs.compute", strings.Join(procs, " "))
}

func pidnsConfig(t *testing.T, lib string) (string, int) {
	port := e2eharness.FreePort(t)
	cfg := strings.ReplaceAll(nvmlConfig, "{{LIB}}", lib)
	return strings.Replace(cfg, "service:\n", fmt.Sprintf(`extensions:
  health_check:
    http:
      endpoint: 127.0.0.1:%d
      status:
        enabled: true
        path: /health/status
    component_health:
      include_recoverable_errors: true
      recovery_duration: 1s
service:
  extensions: [health_check]
`, port), 1), port
}

// statusField is a field of /proc/<pid>/status.
func statusField(pid int, field string) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// childOf is a process whose parent is ppid and whose name is name, or 0.
func childOf(ppid int, name string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if statusField(pid, "PPid") == strconv.Itoa(ppid) && (name == "" || statusField(pid, "Name") == name) {
			return pid
		}
	}
	return 0
}

// TestPIDNamespaceHidesProcesses: the collector started under unshare --pid --fork
// --mount-proc, two workload processes outside its namespace and one inside. The library
// lists only the inside one, by its pid in the namespace; the collector warns once, reports
// its recoverable error in the health check, sets nvidia.gpu.process.hidden and emits no
// unattributed memory (19 GiB used, 1 GiB listed: 18 GiB would be a false zombie).
func TestPIDNamespaceHidesProcesses(t *testing.T) {
	hp := hostProc(t)
	dir := t.TempDir()
	lib := fakenvml.MustBuild(t, dir, fakenvml.Full)
	scnPath := filepath.Join(dir, "scenario")
	outside := sleepers(t, 2)
	require.NoError(t, hiddenScenario(outside).Write(scnPath))
	t.Setenv(fakenvml.ScenarioEnv, scnPath)
	t.Setenv(fakenvml.HostProcEnv, hp)
	cfg, port := pidnsConfig(t, lib)
	c := startWrapped(t, []string{"unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGINT", "sh", "-c", `sleep 600 & exec "$0" "$@"`}, cfg, gate)

	// unshare forks sh (pid 1 inside), which starts sleep and execs the collector.
	var inner, collectorPID int
	e2eharness.WaitFor(t, 10*time.Second, c, "the sleeper inside the namespace", func() bool {
		collectorPID = childOf(c.Pid(), "")
		inner = childOf(collectorPID, "sleep")
		return inner != 0
	})
	// unshare forwards no signal: the collector is stopped itself, and unshare exits with
	// its status (before c.stop, which Cleanup runs later).
	t.Cleanup(func() {
		_ = syscall.Kill(collectorPID, syscall.SIGINT)
		select {
		case <-c.Done():
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(collectorPID, syscall.SIGKILL)
		}
		_ = syscall.Kill(inner, syscall.SIGKILL)
	})
	nspid := strings.Fields(statusField(inner, "NSpid"))
	require.Len(t, nspid, 2, "a process of the child namespace")
	require.NoError(t, hiddenScenario(append(outside, inner)).Write(scnPath))

	path := filepath.Join(c.dir, "metrics.jsonl")
	var last map[string]float64
	want := fmt.Sprintf("nvidia.gpu.process.memory.usage{nvidia.gpu.process.type=compute,process.executable.name=sleep,process.pid=%s}", nspid[1])
	e2eharness.WaitFor(t, 30*time.Second, c, "the inside process's metrics", func() bool {
		all := e2eharness.ReadMetrics(t, path)
		if len(all) == 0 {
			return false
		}
		last = flatten(t, all[len(all)-1])[gpuH]
		_, ok := last[want]
		return ok
	})
	assert.Equal(t, float64(3<<30), last[want], "the third process, by its pid in the namespace")
	assert.Equal(t, 1.0, last["nvidia.gpu.process.count{nvidia.gpu.process.type=compute}"], "the two outside are not listed")
	assert.Equal(t, 1.0, last["nvidia.gpu.process.hidden"])
	for _, md := range e2eharness.ReadMetrics(t, path) {
		assert.NotContains(t, flatten(t, md)[gpuH], "nvidia.gpu.memory.unattributed", "no false unattributed number")
	}

	url := fmt.Sprintf("http://127.0.0.1:%d/health/status?verbose", port)
	var body string
	e2eharness.WaitFor(t, 20*time.Second, c, "the health check to report the receiver degraded", func() bool {
		code, b := httpGet(url)
		body = b
		return code == http.StatusInternalServerError && strings.Contains(b, "StatusRecoverableError")
	})
	assert.Contains(t, body, "PID namespace")
	out := c.Output()
	assert.Equal(t, 1, strings.Count(out, "the collector is not in the host's PID namespace"), out)
	assert.Contains(t, out, "hostPID: true")
	assert.NotContains(t, out, "processes.proc_root does not show")
}

// TestPIDNamespaceHostSeesAll: the same library mode and workload without unshare: the
// collector is in the host's namespace and sees every process, with unattributed memory.
func TestPIDNamespaceHostSeesAll(t *testing.T) {
	hp := hostProc(t)
	dir := t.TempDir()
	lib := fakenvml.MustBuild(t, dir, fakenvml.Full)
	scnPath := filepath.Join(dir, "scenario")
	pids := sleepers(t, 3)
	require.NoError(t, hiddenScenario(pids).Write(scnPath))
	t.Setenv(fakenvml.ScenarioEnv, scnPath)
	t.Setenv(fakenvml.HostProcEnv, hp)
	cfg, port := pidnsConfig(t, lib)
	c := startCollector(t, cfg, gate)
	path := filepath.Join(c.dir, "metrics.jsonl")
	var last map[string]float64
	e2eharness.WaitFor(t, 30*time.Second, c, "a scrape", func() bool {
		all := e2eharness.ReadMetrics(t, path)
		if len(all) == 0 {
			return false
		}
		last = flatten(t, all[len(all)-1])[gpuH]
		return last != nil
	})
	assert.Equal(t, 3.0, last["nvidia.gpu.process.count{nvidia.gpu.process.type=compute}"])
	for i, p := range pids {
		assert.Equal(t, float64((i+1)<<30), last[fmt.Sprintf("nvidia.gpu.process.memory.usage{nvidia.gpu.process.type=compute,process.executable.name=sleep,process.pid=%d}", p)])
	}
	assert.Equal(t, 0.0, last["nvidia.gpu.process.hidden"])
	assert.Equal(t, float64(19<<30-6<<30), last["nvidia.gpu.memory.unattributed"])
	code, _ := httpGet(fmt.Sprintf("http://127.0.0.1:%d/health/status?verbose", port))
	assert.Equal(t, http.StatusOK, code)
	assert.NotContains(t, c.Output(), "PID namespace")
}

package gpumemreceiver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/test/fakenvml"
)

// Libraries that load but are not NVML. go-nvml calls into whatever it dlopened, and a call
// whose symbol is missing kills the process (exit 127, "symbol lookup error"), so each case
// runs the receiver in a child process: the real backend, go-nvml's Init and the loader's
// lazy binding, one library per process (the loader binds a symbol to the first library).

// cudaStubSource stands for a CUDA-toolkit-style link stub: it has the init call, which
// answers an error, and nothing else (not even nvmlErrorString, which formatting that error
// would call).
const cudaStubSource = `
int nvmlInit_v2(void) { return 999; }
`

// partialSource exports init, shutdown, error strings, the driver version and the device
// count, and none of the per-device calls: Init succeeds, the first handle lookup would not.
const partialSource = `
#include <string.h>
int nvmlInit_v2(void) { return 0; }
int nvmlInit(void) { return 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { (void)r; return "partial"; }
int nvmlSystemGetDriverVersion(char *v, unsigned int n) { strncpy(v, "570.86.15", n); return 0; }
int nvmlDeviceGetCount_v2(unsigned int *c) { *c = 1; return 0; }
`

// missingAfterInit is what both stubs lack of requiredSymbols (libcheck.go) besides init.
var missingAfterInit = []string{
	"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetUUID", "nvmlDeviceGetName", "nvmlDeviceGetPciInfo_v3",
	"nvmlDeviceGetMemoryInfo", "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3",
	"nvmlEventSetCreate", "nvmlEventSetWait_v2", "nvmlEventSetFree",
}

// buildStub compiles a C source into a shared library in dir, as test/fakenvml builds its
// stand-in driver.
func buildStub(t *testing.T, dir, name, src string) string {
	t.Helper()
	c := filepath.Join(dir, name+".c")
	require.NoError(t, os.WriteFile(c, []byte(src), 0o600))
	out := filepath.Join(dir, "lib"+name+".so")
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	msg, err := exec.Command(cc, "-shared", "-fPIC", "-Wall", "-Werror", "-o", out, c).CombinedOutput()
	require.NoError(t, err, "compile %s: %s", name, msg)
	return out
}

// systemLibrary finds a library of the host by its soname, as `ldconfig -p` lists it for
// this process's architecture.
func systemLibrary(t *testing.T, soname string) string {
	t.Helper()
	out, err := exec.Command("ldconfig", "-p").Output()
	require.NoError(t, err, "ldconfig -p")
	arch := map[string]string{"amd64": "x86-64", "arm64": "AArch64"}[runtime.GOARCH]
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 4 && fields[0] == soname && strings.Contains(fields[1], arch) {
			return fields[len(fields)-1]
		}
	}
	t.Skipf("%s (%s) not in the loader cache", soname, arch)
	return ""
}

// notNVMLCases are the libraries the receiver must refuse, with the calls it names.
func notNVMLCases(t *testing.T, dir string) []struct{ name, path string } {
	return []struct{ name, path string }{
		{"libz", systemLibrary(t, "libz.so.1")},
		{"libc", systemLibrary(t, "libc.so.6")},
		{"cuda-stub", buildStub(t, dir, "cudastub", cudaStubSource)},
		{"partial", buildStub(t, dir, "partial", partialSource)},
	}
}

// The environment that makes the test binary run one receiver on a library and report.
const (
	childLibraryEnv = "GPUMEM_TEST_CHILD_LIBRARY"
	childResultEnv  = "GPUMEM_TEST_CHILD_RESULT"
)

// childResult is what the child saw: the component statuses, its log lines at Warn and
// above, how often Init was retried, and one scrape.
type childResult struct {
	Up        bool
	Statuses  []string
	Logs      []childLog
	Retries   int
	Metrics   int
	ScrapeErr string
}

type childLog struct {
	Level, Message string
	Fields         map[string]any
}

// A library_path that is not NVML is refused before go-nvml calls into it: the collector
// stays up, the receiver reports a recoverable status and one error naming the library and
// what it lacks, and retries as for a missing driver. The stand-in driver still starts.
func TestLibraryThatIsNotNVMLDoesNotStopTheCollector(t *testing.T) {
	if lib := os.Getenv(childLibraryEnv); lib != "" {
		runLibraryChild(t, lib, os.Getenv(childResultEnv))
		return
	}
	dir := t.TempDir()
	for _, tc := range notNVMLCases(t, dir) {
		t.Run(tc.name, func(t *testing.T) {
			res := runChild(t, tc.path, nil)
			assert.False(t, res.Up)
			assert.Equal(t, []string{"StatusRecoverableError"}, res.Statuses)
			require.Len(t, res.Logs, 1, "one line at warn or above: %+v", res.Logs)
			l := res.Logs[0]
			assert.Equal(t, "error", l.Level)
			assert.Contains(t, l.Message, "is not the NVIDIA driver's NVML library and is never called into")
			assert.Equal(t, tc.path, l.Fields["library"])
			assert.Contains(t, l.Fields["error"], tc.path)
			missing, _ := l.Fields["missing_symbols"].([]any)
			var names []string
			for _, m := range missing {
				names = append(names, m.(string))
			}
			assert.Subset(t, names, missingAfterInit)
			assert.GreaterOrEqual(t, res.Retries, 2, "retried as for a missing driver")
			assert.Empty(t, res.ScrapeErr, "no error per tick while refused")
			assert.Zero(t, res.Metrics)
		})
	}
	t.Run("fakenvml", func(t *testing.T) {
		lib := fakenvml.MustBuild(t, dir, fakenvml.Full)
		scn := filepath.Join(dir, "scenario")
		require.NoError(t, fakenvml.Scenario{}.Set("driver_version", "570.86.15").Set("gpu_count", 1).
			GPU(0, "uuid", "GPU-11111111-2222-3333-4444-555555555555").GPU(0, "name", "NVIDIA A100-SXM4-40GB").
			GPU(0, "mem.total", 40<<30).GPU(0, "mem.free", 30<<30).GPU(0, "mem.used", 10<<30).Write(scn))
		res := runChild(t, lib, []string{fakenvml.ScenarioEnv + "=" + scn})
		assert.True(t, res.Up, "a library with every call is used: %+v", res)
		assert.Empty(t, res.Logs)
		assert.Positive(t, res.Metrics)
	})
}

// runChild runs this test in a child process on lib and reads what it saw. A child that
// dies (the loader's exit 127) fails the test with its output.
func runChild(t *testing.T, lib string, env []string) childResult {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLibraryThatIsNotNVMLDoesNotStopTheCollector$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), childLibraryEnv+"="+lib, childResultEnv+"="+out), env...)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "the receiver on %s stopped the process:\n%s", lib, msg)
	data, err := os.ReadFile(out)
	require.NoError(t, err, "child output:\n%s", msg)
	var res childResult
	require.NoError(t, json.Unmarshal(data, &res))
	return res
}

// runLibraryChild starts the receiver with backend nvml on lib, lets it retry, scrapes once,
// shuts down and writes what it saw to out.
func runLibraryChild(t *testing.T, lib, out string) {
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := createDefaultConfig().(*Config)
	cfg.LibraryPath = lib
	cfg.Xid.KmsgPath = ""
	cfg.Kubernetes.PodResourcesSocket, cfg.Kubernetes.PodLogsDir = "", ""
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	r := newGPUMemReceiver(cfg, set)
	r.retryMin = 5 * time.Millisecond
	host := &statusHost{Host: componenttest.NewNopHost()}
	require.NoError(t, r.Start(context.Background(), host))
	retries := func() int { return logs.FilterMessage("NVML still unavailable").Len() }
	deadline := time.Now().Add(5 * time.Second)
	for !r.sess.IsUp() && retries() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	res := childResult{Up: r.sess.IsUp(), Retries: retries()}
	md, err := r.scrapeMetrics(context.Background())
	if err != nil {
		res.ScrapeErr = err.Error()
	}
	res.Metrics = md.MetricCount()
	require.NoError(t, r.Shutdown(context.Background()))
	for _, s := range host.statuses() {
		res.Statuses = append(res.Statuses, s.String())
	}
	for _, e := range logs.FilterLevelExact(zapcore.WarnLevel).All() {
		res.Logs = append(res.Logs, childLog{Level: e.Level.String(), Message: e.Message, Fields: e.ContextMap()})
	}
	for _, e := range logs.FilterLevelExact(zapcore.ErrorLevel).All() {
		res.Logs = append(res.Logs, childLog{Level: e.Level.String(), Message: e.Message, Fields: e.ContextMap()})
	}
	data, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(out, data, 0o600))
}

package gpumemreceiver

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/pidns"
)

// startLogged starts a receiver like startWith, logging into the returned observer.
func startLogged(t *testing.T, lib nvml.Interface, fsys fs.FS) (*gpuMemReceiver, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	cfg.Processes.ProcRoot = "/proc"
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	r := newGPUMemReceiver(cfg, set)
	r.newBackend = func(*Config) (node.Node, error) { return node.Node{Lib: lib, ProcFS: fsys}, nil }
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return r, logs
}

func TestProcessVPID(t *testing.T) {
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: uint64(gib)}, {Pid: 4343, UsedGpuMemory: uint64(gib)}}
	fsys := fstest.MapFS{
		"4242/comm":   {Data: []byte("python3\n")},
		"4242/cgroup": {Data: []byte("0::/\n")},
		"4242/status": {Data: []byte("Name:\tpython3\nNSpid:\t4242\t17\n")},
		// 4343: a kernel without NSpid (before 4.1) says nothing of namespaces.
		"4343/comm":   {Data: []byte("python3\n")},
		"4343/cgroup": {Data: []byte("0::/\n")},
		"4343/status": {Data: []byte("Name:\tpython3\n")},
	}
	r, _ := startLogged(t, newFakeNVML(g), fsys)
	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	procs := byGPU(md)[g.uuid]["nvidia.gpu.process.memory.usage"]
	require.Len(t, procs, 2)
	assert.Equal(t, int64(17), procs[0].attrs["process.vpid"], "the pid inside the container")
	assert.NotContains(t, procs[1].attrs, "process.vpid")
}

// A proc root of another pid namespace shows none of NVML's pids: one warning naming
// processes.proc_root and the fix, and the metrics keep coming with pids alone.
func TestProcRootWithoutHostPIDsWarnsOnce(t *testing.T) {
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 5001, UsedGpuMemory: uint64(gib)}, {Pid: 5002, UsedGpuMemory: uint64(gib)}}
	r, logs := startLogged(t, newFakeNVML(g), fstest.MapFS{"1/comm": {Data: []byte("otelcol\n")}})
	for i := 0; i < 6; i++ {
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		procs := byGPU(md)[g.uuid]["nvidia.gpu.process.memory.usage"]
		require.Len(t, procs, 2)
		assert.Equal(t, map[string]any{"process.pid": int64(5001), "nvidia.gpu.process.type": "compute"}, procs[0].attrs)
	}
	warnings := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("processes.proc_root").All()
	require.Len(t, warnings, 1)
	fields := warnings[0].ContextMap()
	assert.Equal(t, "/proc", fields["proc_root"])
	assert.Contains(t, fields["fix"], "/host/proc")
}

func TestProcRootShowingHostPIDsDoesNotWarn(t *testing.T) {
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: uint64(gib)}}
	for p := uint32(0); p < 8; p++ { // eight that exited: one visible process is enough
		g.compute = append(g.compute, nvml.ProcessInfo{Pid: 200 + p, UsedGpuMemory: uint64(gib)})
	}
	r, logs := startLogged(t, newFakeNVML(g), procTree(map[uint32]procEntry{100: {"python3", "0::/\n"}}))
	for i := 0; i < 3; i++ {
		_, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
	}
	assert.Zero(t, logs.FilterLevelExact(zapcore.WarnLevel).Len())
}

func TestPIDVisibilityIgnoresOtherErrors(t *testing.T) {
	core, logs := observer.New(zapcore.WarnLevel)
	v := pidNamespace{procRoot: "/host/proc", logger: zap.New(core)}
	for i := 0; i < 2*pidMissesBeforeWarning; i++ {
		v.observe(fs.ErrPermission)
	}
	assert.Zero(t, logs.Len(), "a permission error says nothing about namespaces")
	for i := 0; i < pidMissesBeforeWarning-1; i++ {
		v.observe(errors.Join(errors.New("look up pid 7"), fs.ErrNotExist))
	}
	assert.Zero(t, logs.Len(), "not yet")
	v.observe(fs.ErrNotExist)
	v.observe(fs.ErrNotExist)
	assert.Equal(t, 1, logs.Len())
}

// startInNamespace starts a receiver whose backend found res, reporting status to host.
func startInNamespace(t *testing.T, lib nvml.Interface, fsys fs.FS, res pidns.Result, host component.Host) (*gpuMemReceiver, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	cfg.Processes.ProcRoot = "/host/proc"
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	r := newGPUMemReceiver(cfg, set)
	r.newBackend = func(*Config) (node.Node, error) {
		return node.Node{Lib: lib, ProcFS: fsys, PIDNamespace: res}, nil
	}
	require.NoError(t, r.Start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return r, logs
}

// A collector in a PID namespace of its own, on a driver that translates pids: one WARN
// naming what is lost and the fix, the component's recoverable error, nvidia.gpu.process.hidden
// 1 and no nvidia.gpu.memory.unattributed (it would be the other pods' memory). The processes
// NVML does list (the collector's namespace's) keep their metrics.
func TestHiddenNamespace(t *testing.T) {
	for _, tc := range []struct {
		verdict      pidns.Verdict
		driver       string
		hidden       bool
		wantLookedUp bool
	}{
		{pidns.Own, "570.86.15", true, true},
		{pidns.Below, "570.86.15", true, false},  // pids of the collector's namespace are not proc_root's
		{pidns.Below, "535.104.05", false, true}, // this driver reports host pids: proc_root shows them
		{pidns.Host, "570.86.15", false, true},
		{pidns.HostLike, "570.86.15", false, true},
	} {
		t.Run(tc.verdict.String()+"/"+tc.driver, func(t *testing.T) {
			g := newFakeGPU(0)
			g.compute = []nvml.ProcessInfo{{Pid: 7, UsedGpuMemory: uint64(gib)}}
			lib := newFakeNVML(g)
			lib.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return tc.driver, nvml.SUCCESS }
			host := &statusHost{}
			r, logs := startInNamespace(t, lib, procTree(map[uint32]procEntry{7: {"python3", "0::/\n"}}),
				pidns.Result{Verdict: tc.verdict, NS: 4026532175, Depth: 1}, host)
			var md pmetric.Metrics
			for range 3 {
				var err error
				md, err = r.scrapeMetrics(context.Background())
				require.NoError(t, err)
			}
			m := byGPU(md)[g.uuid]
			require.Len(t, m["nvidia.gpu.process.hidden"], 1)
			assert.Equal(t, float64(boolInt(tc.hidden)), m["nvidia.gpu.process.hidden"][0].value)
			require.Len(t, m["nvidia.gpu.process.memory.usage"], 1, "what NVML lists is reported")
			_, named := m["nvidia.gpu.process.memory.usage"][0].attrs["process.executable.name"]
			assert.Equal(t, tc.wantLookedUp, named)
			warns := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("PID namespace").All()
			if !tc.hidden {
				assert.NotEmpty(t, m["nvidia.gpu.memory.unattributed"])
				assert.Empty(t, warns)
				assert.Empty(t, host.statuses())
				return
			}
			assert.Empty(t, m["nvidia.gpu.memory.unattributed"], "not a false number")
			require.Len(t, warns, 1)
			assert.Contains(t, warns[0].ContextMap()["fix"], "hostPID: true")
			assert.Equal(t, tc.driver, warns[0].ContextMap()["driver_version"])
			assert.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError}, host.statuses())
			assert.Zero(t, logs.FilterMessageSnippet("processes.proc_root does not show").Len(), "the namespace warning stands for the lookups")
		})
	}
}

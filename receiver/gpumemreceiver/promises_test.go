package gpumemreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// Tests of promises the README makes, each written against a small bug that broke it.

// "If the kernel log cannot be read, the receiver says so once and uses NVML events alone":
// one warning naming the path, and NVML's Xids still become records.
func TestXidKmsgUnopenableKeepsNVMLEvents(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = filepath.Join(t.TempDir(), "missing", "kmsg")
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	r := newGPUMemReceiver(cfg, set)
	sink := &consumertest.LogsSink{}
	r.nextLogs = sink
	lib := newFakeNVML(newFakeGPU(0))
	r.newBackend = func(c *Config) (node.Node, error) {
		return node.Node{Lib: lib, ProcFS: fstest.MapFS{}, KmsgPath: c.Xid.KmsgPath}, nil
	}
	clock := newXidClock()
	clock.install(r)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

	lib.events <- xidAt{device: 0, xid: 48}
	clock.settle(t, r.xids, 1)
	clock.pass(xidsource.MergeWindow)
	require.Equal(t, 1, sink.LogRecordCount(), "an NVML Xid still arrives without the kernel log")
	lr := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, "nvml", lr.Attributes().AsRaw()["nvidia.gpu.xid.source"])

	lib.events <- xidAt{device: 0, xid: 63}
	clock.settle(t, r.xids, 2)
	clock.pass(xidsource.MergeWindow)
	require.Equal(t, 2, sink.LogRecordCount())
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1, "one warning, not one per event: %v", warns)
	assert.Contains(t, warns[0].Message, "kernel log")
	assert.Contains(t, warns[0].Message, "NVML alone")
	assert.Equal(t, cfg.Xid.KmsgPath, warns[0].ContextMap()["kmsg_path"])
}

// Unattributed memory is floored at 0: processes can account for more than used (the two
// NVML reads are not atomic, and per-process memory includes what v2 used leaves out).
func TestUnattributedFlooredAtZero(t *testing.T) {
	g := newFakeGPU(0)
	g.used = 10 * gib
	g.compute = []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: uint64(8 * gib)}, {Pid: 200, UsedGpuMemory: uint64(4 * gib)}}
	r := startWith(t, newFakeNVML(g), fstest.MapFS{})
	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	un := byGPU(md)[g.uuid]["nvidia.gpu.memory.unattributed"]
	require.Len(t, un, 1)
	assert.Equal(t, 0.0, un[0].value, "10 GiB used, 12 GiB attributed: nothing unexplained, never negative")
}

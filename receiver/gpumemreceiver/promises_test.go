package gpumemreceiver

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
	"time"

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
	r.newBackend = func(c *Config) (backend, error) {
		return backend{lib: lib, procFS: fstest.MapFS{}, kmsgPath: c.Xid.KmsgPath}, nil
	}
	clock := newXidClock()
	clock.install(r)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

	lib.events <- xidAt{device: 0, xid: 48}
	clock.settle(t, r.xids, 1)
	clock.pass(xidMergeWindow)
	require.Equal(t, 1, sink.LogRecordCount(), "an NVML Xid still arrives without the kernel log")
	lr := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, "nvml", lr.Attributes().AsRaw()["nvidia.gpu.xid.source"])

	lib.events <- xidAt{device: 0, xid: 63}
	clock.settle(t, r.xids, 2)
	clock.pass(xidMergeWindow)
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

// The NVML init retry doubles its wait after each failure up to retryMax, and stays there.
// The waits are read from the debug line each retry logs (next_try), so the test does not
// depend on how long the sleeps really took.
func TestInitRetryBackoffGrowsAndIsCapped(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	var mu sync.Mutex
	inits := 0
	lib := newFakeNVML(newFakeGPU(0))
	lib.InitFunc = func() nvml.Return {
		mu.Lock()
		defer mu.Unlock()
		inits++
		if inits <= 8 {
			return nvml.ERROR_DRIVER_NOT_LOADED
		}
		return nvml.SUCCESS
	}
	s := newSession(lib, "libnvidia-ml.so.1", zap.New(core))
	s.retryMin, s.retryMax = time.Millisecond, 8*time.Millisecond
	s.start(componenttest.NewNopHost())
	t.Cleanup(s.shutdown)
	require.Eventually(t, s.isUp, 10*time.Second, time.Millisecond)

	var waits []time.Duration
	for _, e := range logs.FilterMessage("NVML still unavailable").All() {
		waits = append(waits, e.ContextMap()["next_try"].(time.Duration))
	}
	require.Len(t, waits, 7, "1 failure at start, 7 retries that fail, then success")
	assert.Contains(t, []time.Duration{s.retryMin, 2 * s.retryMin}, waits[0], "starts at retryMin (the wait just taken or the next one)")
	for i := 1; i < len(waits); i++ {
		assert.Equal(t, min(2*waits[i-1], s.retryMax), waits[i], "wait %d doubles up to retryMax: %v", i, waits)
	}
	assert.Equal(t, s.retryMax, waits[len(waits)-1], "capped: %v", waits)
}

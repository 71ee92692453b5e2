package gpumemreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// xidHarness is a receiver on fake NVML with a kernel log file the test appends to, and the
// Xid merge on a clock and ticker the test steps.
type xidHarness struct {
	r     *gpuMemReceiver
	lib   *fakeNVML
	sink  *consumertest.LogsSink
	clock *xidClock
	kmsg  string
	boot  time.Time
	seq   int
}

// xidClock is the receiver's clock and the Xid merge's ticker, stepped by the test: merging
// waits for no real time, and what is emitted when is exact.
type xidClock struct {
	mu   sync.Mutex
	t    time.Time
	tick chan time.Time // unbuffered: a send returns once the merge loop is waiting again
}

func newXidClock() *xidClock {
	return &xidClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), tick: make(chan time.Time)}
}

func (c *xidClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// install makes r (before Start) use the clock and the ticker.
func (c *xidClock) install(r *gpuMemReceiver) {
	r.now = c.now
	r.xidTicker = func(time.Duration) (<-chan time.Time, func()) { return c.tick, func() {} }
}

// settle waits until n events have been queued and the merge loop has taken each in.
func (c *xidClock) settle(t *testing.T, x *xidsource.Source, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return x.Queued() == n && x.Waiting() == 0 }, 10*time.Second, time.Millisecond,
		"%d Xid events queued", n)
	c.tick <- c.now() // the loop is back in its select: the last event is merged
}

// pass moves the clock by d and ticks; when it returns, the flush that tick caused is done.
func (c *xidClock) pass(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	c.tick <- c.now()
	c.tick <- c.now()
}

func newXidHarness(t *testing.T, nvmlEvents bool, gpus ...*fakeGPU) *xidHarness {
	t.Helper()
	h := &xidHarness{lib: newFakeNVML(gpus...), sink: &consumertest.LogsSink{}, clock: newXidClock(), boot: time.Now().Add(-time.Hour)}
	h.kmsg = filepath.Join(t.TempDir(), "kmsg")
	require.NoError(t, os.WriteFile(h.kmsg, nil, 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = h.kmsg
	cfg.Xid.NVMLEvents = nvmlEvents
	h.r = newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	h.r.nextLogs = h.sink
	h.clock.install(h.r)
	h.r.newBackend = func(c *Config) (node.Node, error) {
		return node.Node{Lib: h.lib, ProcFS: fstest.MapFS{}, KmsgPath: c.Xid.KmsgPath, Boot: h.boot}, nil
	}
	require.NoError(t, h.r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, h.r.Shutdown(context.Background())) })
	return h
}

// kernel appends a kmsg record stamped at "now".
func (h *xidHarness) kernel(t *testing.T, text string) {
	t.Helper()
	h.seq++
	usec := time.Since(h.boot).Microseconds()
	f, err := os.OpenFile(h.kmsg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fmt.Fprintf(f, "3,%d,%d,-;%s\n", h.seq, usec, text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// flush waits for n queued events and lets the merge window pass.
func (h *xidHarness) flush(t *testing.T, n int64) {
	t.Helper()
	h.clock.settle(t, h.r.xids, n)
	h.clock.pass(xidsource.MergeWindow)
}

// records returns what was emitted, which must be n records.
func (h *xidHarness) records(t *testing.T, n int) []plog.LogRecord {
	t.Helper()
	require.Equal(t, n, h.sink.LogRecordCount())
	var out []plog.LogRecord
	for _, ld := range h.sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().At(0).LogRecords().Len(); j++ {
				lr := rl.ScopeLogs().At(0).LogRecords().At(j)
				// Carry the resource along for assertions.
				rl.Resource().Attributes().Range(func(k string, v pcommon.Value) bool {
					lr.Attributes().PutStr("resource."+k, v.AsString())
					return true
				})
				out = append(out, lr)
			}
		}
	}
	return out
}

// The NVML event and the kernel line of one Xid become one record: NVML names the GPU, the
// kernel line the process and the text.
func TestXidMergedFromBothSources(t *testing.T) {
	g0, g1 := newFakeGPU(0), newFakeGPU(1) // bus ids 00000000:18:00.0, 00000000:19:00.0
	h := newXidHarness(t, true, g0, g1)
	h.lib.events <- xidAt{device: 1, xid: 31}
	h.kernel(t, "NVRM: Xid (PCI:0000:19:00): 31, pid=4242, name=python train.py, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f5e_1c000000.")

	h.clock.settle(t, h.r.xids, 2)
	h.clock.pass(xidsource.MergeWindow - time.Millisecond)
	assert.Zero(t, h.sink.LogRecordCount(), "held for its twin until the window has passed")
	h.clock.pass(time.Millisecond)
	recs := h.records(t, 1) // one record per occurrence
	h.clock.pass(xidsource.MergeWindow)
	require.Equal(t, 1, h.sink.LogRecordCount(), "and only one")
	a := recs[0].Attributes().AsRaw()
	assert.Equal(t, "both", a["nvidia.gpu.xid.source"])
	assert.Equal(t, int64(31), a["nvidia.gpu.xid"])
	assert.Equal(t, "nvidia.gpu.xid", a["event.name"])
	assert.Equal(t, "application", a["nvidia.gpu.xid.origin"])
	assert.NotEmpty(t, a["nvidia.gpu.xid.description"])
	assert.Equal(t, int64(4242), a["process.pid"])
	assert.Equal(t, "python train.py", a["process.executable.name"])
	assert.Equal(t, "00000000:19:00.0", a["nvidia.gpu.pci.bus_id"])
	assert.Equal(t, g1.uuid, a["resource.hw.id"])
	assert.Equal(t, "ERROR", recs[0].SeverityText())
	assert.Equal(t, plog.SeverityNumberError, recs[0].SeverityNumber())
	assert.Contains(t, recs[0].Body().Str(), "MMU Fault")
	assert.WithinDuration(t, time.Now(), recs[0].Timestamp().AsTime(), 10*time.Second)

	md, err := h.r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	xids := byGPU(md)[g1.uuid]["nvidia.gpu.xid.errors"]
	require.Len(t, xids, 1)
	assert.Equal(t, 1.0, xids[0].value)
	assert.Equal(t, int64(31), xids[0].attrs["nvidia.gpu.xid"])
}

func TestXidNVMLOnly(t *testing.T) {
	h := newXidHarness(t, true, newFakeGPU(0))
	h.lib.events <- xidAt{device: 0, xid: 48}
	h.flush(t, 1)
	a := h.records(t, 1)[0].Attributes().AsRaw()
	assert.Equal(t, "nvml", a["nvidia.gpu.xid.source"])
	assert.Equal(t, int64(48), a["nvidia.gpu.xid"])
	assert.Equal(t, "hardware", a["nvidia.gpu.xid.origin"])
	assert.NotContains(t, a, "process.pid")
}

// A GPU that fell off the bus is gone from NVML's list; its record keeps the bus id alone,
// and the driver's two lines for it (numbered and not) are one occurrence.
func TestXidGPULost(t *testing.T) {
	h := newXidHarness(t, false, newFakeGPU(0))
	h.kernel(t, "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
	h.kernel(t, "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.")
	h.kernel(t, "usb 1-1: new high-speed USB device number 2 using xhci_hcd")
	h.flush(t, 2) // the USB line is no Xid: never queued
	recs := h.records(t, 1)
	a := recs[0].Attributes().AsRaw()
	assert.Equal(t, int64(79), a["nvidia.gpu.xid"])
	assert.Equal(t, "kmsg", a["nvidia.gpu.xid.source"])
	assert.Equal(t, "00000000:3B:00.0", a["resource.nvidia.gpu.pci.bus_id"])
	assert.NotContains(t, a, "resource.hw.id")
	assert.NotContains(t, a, "process.pid", "pid='<unknown>' is no pid")
}

func TestXidKmsgUnreadableIsNotFatal(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = filepath.Join(t.TempDir(), "missing", "kmsg")
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	r.newBackend = func(c *Config) (node.Node, error) {
		return node.Node{Lib: newFakeNVML(newFakeGPU(0)), ProcFS: fstest.MapFS{}, KmsgPath: c.Xid.KmsgPath}, nil
	}
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.Shutdown(context.Background()))
}

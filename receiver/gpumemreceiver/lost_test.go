package gpumemreceiver

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// observed is a receiver started on a mock library with a settable clock, its logs and its
// own telemetry.
type observed struct {
	r     *gpuMemReceiver
	logs  *observer.ObservedLogs
	tel   *componenttest.Telemetry
	clock time.Time
}

func startObserved(t *testing.T, lib nvml.Interface) *observed {
	t.Helper()
	o := &observed{clock: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), tel: componenttest.NewTelemetry()}
	core, logs := observer.New(zapcore.InfoLevel)
	o.logs = logs
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	cfg.Xid.NVMLEvents = false
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = o.tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	o.r = newGPUMemReceiver(cfg, set)
	o.r.now = func() time.Time { return o.clock }
	o.r.newBackend = func(*Config) (node.Node, error) { return node.Node{Lib: lib, ProcFS: fstest.MapFS{}}, nil }
	require.NoError(t, o.r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() {
		require.NoError(t, o.r.Shutdown(context.Background()))
		require.NoError(t, o.tel.Shutdown(context.Background()))
	})
	return o
}

// scrape advances the clock by a second and scrapes.
func (o *observed) scrape(t *testing.T) (map[string]map[string][]point, error) {
	t.Helper()
	o.clock = o.clock.Add(time.Second)
	md, err := o.r.scrapeMetrics(context.Background())
	return byGPU(md), err
}

// status is the GPU's current hw.state, "" when hw.status is absent or malformed.
func status(t *testing.T, gpu map[string][]point) string {
	t.Helper()
	pts := gpu["hw.status"]
	if !assert.Len(t, pts, 3, "one hw.status point per state") {
		return ""
	}
	current := ""
	for _, p := range pts {
		assert.Equal(t, "gpu", p.attrs["hw.type"])
		if p.value == 1 {
			assert.Empty(t, current, "one state is current")
			current = p.attrs["hw.state"].(string)
		} else {
			assert.Zero(t, p.value)
		}
	}
	return current
}

func (o *observed) failedScrapes(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	m, err := o.tel.GetMetric(failedScrapes.Name)
	if err != nil {
		return out
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		reason, _ := dp.Attributes.Value("reason")
		out[reason.AsString()] = dp.Value
	}
	return out
}

// A GPU answering GPU_IS_LOST: one WARN naming it, its bus id and what to do; hw.status
// failed; no error per scrape and no further calls to it; picked up again with one INFO
// when a re-enumeration finds it answering.
func TestLostGPU(t *testing.T) {
	bad, good := newFakeGPU(0), newFakeGPU(1)
	lib := newFakeNVML(bad, good)
	o := startObserved(t, lib)

	got, err := o.scrape(t)
	require.NoError(t, err)
	assert.Equal(t, "ok", status(t, got[bad.uuid]))
	assert.Equal(t, "ok", status(t, got[good.uuid]))

	bad.memV2, bad.memV1, bad.utilization, bad.processes = nvml.ERROR_GPU_IS_LOST, nvml.ERROR_GPU_IS_LOST, nvml.ERROR_GPU_IS_LOST, nvml.ERROR_GPU_IS_LOST
	got, err = o.scrape(t)
	require.NoError(t, err, "the warning stands for GPU_IS_LOST; no partial error to log each second")
	assert.Equal(t, "failed", status(t, got[bad.uuid]))
	assert.NotContains(t, got[bad.uuid], "hw.gpu.memory.usage")
	assert.Equal(t, "ok", status(t, got[good.uuid]))
	assert.Contains(t, got[good.uuid], "hw.gpu.memory.usage")

	calls := len(lib.devices[0].GetMemoryInfo_v2Calls())
	for range 20 {
		got, err = o.scrape(t)
		require.NoError(t, err)
		assert.Equal(t, "failed", status(t, got[bad.uuid]))
	}
	assert.Equal(t, calls, len(lib.devices[0].GetMemoryInfo_v2Calls()), "a lost GPU is not queried each second")

	warns := o.logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1, "one warning for a lost GPU")
	fields := warns[0].ContextMap()
	assert.Equal(t, bad.uuid, fields["gpu"])
	assert.Equal(t, bad.busID, fields["pci_bus_id"])
	assert.Contains(t, fields["action"], "reboot")
	assert.Equal(t, int64(21), o.failedScrapes(t)["gpu_is_lost"], "a lost GPU counts")

	// Reset: the GPU answers again. Within one re-enumeration period it is back.
	bad.memV2, bad.memV1, bad.utilization, bad.processes = nvml.SUCCESS, nvml.SUCCESS, nvml.SUCCESS, nvml.SUCCESS
	for i := 0; i < 31 && status(t, got[bad.uuid]) == "failed"; i++ {
		got, err = o.scrape(t)
		require.NoError(t, err)
	}
	assert.Equal(t, "ok", status(t, got[bad.uuid]))
	assert.Contains(t, got[bad.uuid], "hw.gpu.memory.usage")
	back := o.logs.FilterMessage("GPU is back: querying it again").All()
	require.Len(t, back, 1)
	assert.Equal(t, bad.uuid, back[0].ContextMap()["gpu"])
}

// Xid 79 from either source marks the GPU lost, as GPU_IS_LOST does.
func TestXid79MarksTheGPULost(t *testing.T) {
	g := newFakeGPU(0)
	o := startObserved(t, newFakeNVML(g))
	got, err := o.scrape(t)
	require.NoError(t, err)
	assert.Equal(t, "ok", status(t, got[g.uuid]))

	var dev *nvmlx.Device
	require.NoError(t, o.r.sess.WithDevices(func(_ string, ds []*nvmlx.Device) { dev = ds[0] }))
	o.r.emitXids([]xidsource.Event{{Code: 79, Dev: dev, BusID: g.busID, Kmsg: true}})
	got, err = o.scrape(t)
	require.NoError(t, err)
	assert.Equal(t, "failed", status(t, got[g.uuid]))
	require.Len(t, o.logs.FilterLevelExact(zapcore.WarnLevel).All(), 1)
	assert.Contains(t, o.logs.FilterLevelExact(zapcore.WarnLevel).All()[0].ContextMap()["reason"], "Xid 79 (kmsg)")
}

// Degraded while a page retirement or a row remapping waits for a reset.
func TestStatusDegraded(t *testing.T) {
	retiring, remapping := newFakeGPU(0), newFakeGPU(1)
	retiring.retired, retiring.retiredPending = map[nvml.PageRetirementCause]int{}, true
	remapping.remap = &[4]int{1, 0, 1, 0}
	o := startObserved(t, newFakeNVML(retiring, remapping))
	got, err := o.scrape(t)
	require.NoError(t, err)
	assert.Equal(t, "degraded", status(t, got[retiring.uuid]))
	assert.Equal(t, "degraded", status(t, got[remapping.uuid]))

	retiring.retiredPending = false
	remapping.remap = &[4]int{1, 0, 0, 0}
	got, err = o.scrape(t)
	require.NoError(t, err)
	assert.Equal(t, "ok", status(t, got[retiring.uuid]))
	assert.Equal(t, "ok", status(t, got[remapping.uuid]))
}

// A call failing scrape after scrape is a partial scrape error once (the controller logs
// it), counted every scrape, reported again when it changes, and logged when it clears.
func TestPersistentFailureReportedOnce(t *testing.T) {
	g := newFakeGPU(0)
	g.processes = nvml.ERROR_UNKNOWN
	o := startObserved(t, newFakeNVML(g))

	_, err := o.scrape(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "list compute processes of GPU "+g.uuid)
	for range 5 {
		got, err := o.scrape(t)
		require.NoError(t, err, "the same failure is not reported again")
		assert.Contains(t, got[g.uuid], "hw.gpu.memory.usage")
	}
	assert.Equal(t, map[string]int64{"unknown": 6}, o.failedScrapes(t))

	g.processes = nvml.ERROR_NO_PERMISSION
	_, err = o.scrape(t)
	require.Error(t, err, "a changed failure is reported")
	assert.Contains(t, err.Error(), "list compute processes of GPU "+g.uuid)

	g.processes = nvml.SUCCESS
	_, err = o.scrape(t)
	require.NoError(t, err)
	cleared := o.logs.FilterMessage("NVML call works again").All()
	require.Len(t, cleared, 1)
	assert.Equal(t, "list compute processes of GPU "+g.uuid, cleared[0].ContextMap()["call"])
	assert.Equal(t, map[string]int64{"unknown": 6, "no_permission": 1}, o.failedScrapes(t))
}

// A GPU added while the collector runs (a driver reload) is picked up by re-enumeration.
func TestRediscoverFindsNewGPU(t *testing.T) {
	first := newFakeGPU(0)
	lib := newFakeNVML(first)
	o := startObserved(t, lib)
	got, err := o.scrape(t)
	require.NoError(t, err)
	require.Len(t, got, 1)

	second := newFakeGPU(1)
	lib.devices = append(lib.devices, second.device(1))
	for i := 0; i < 31 && len(got) == 1; i++ {
		got, err = o.scrape(t)
		require.NoError(t, err)
	}
	assert.Contains(t, got, second.uuid)
	assert.Len(t, o.logs.FilterMessage("GPU found").All(), 1)
}

// A GPU lost before the collector starts is warned about by index and picked up once it answers.
func TestLostAtStart(t *testing.T) {
	a, b := newFakeGPU(0), newFakeGPU(1)
	lib := newFakeNVML(a, b)
	lost := true
	handle := lib.DeviceGetHandleByIndexFunc
	lib.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i == 1 && lost {
			return nil, nvml.ERROR_GPU_IS_LOST
		}
		return handle(i)
	}
	o := startObserved(t, lib)
	warns := o.logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1)
	assert.Equal(t, int64(1), warns[0].ContextMap()["index"])
	assert.Contains(t, warns[0].ContextMap()["action"], "reboot")

	got, err := o.scrape(t)
	require.NoError(t, err)
	require.Len(t, got, 1)
	lost = false
	for i := 0; i < 31 && len(got) == 1; i++ {
		got, err = o.scrape(t)
		require.NoError(t, err)
	}
	assert.Equal(t, "ok", status(t, got[b.uuid]))
}

// Empty batches (NVML down, no GPU) never reach the next consumer.
func TestSkipEmpty(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	c := skipEmpty(sink)
	require.NoError(t, c.ConsumeMetrics(context.Background(), pmetric.NewMetrics()))
	assert.Empty(t, sink.AllMetrics())
	md := pmetric.NewMetrics()
	md.ResourceMetrics().AppendEmpty()
	require.NoError(t, c.ConsumeMetrics(context.Background(), md))
	assert.Len(t, sink.AllMetrics(), 1)
}

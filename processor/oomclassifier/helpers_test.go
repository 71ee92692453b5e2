package oomclassifier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
)

const gib = int64(1) << 30

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// pytorchOOM names pid 3101 as the failing process (GPU 0) and 3377 as another.
const pytorchOOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 39.39 GiB of which 2.06 GiB is free. Process 3101 has 30.01 GiB memory in use. Process 3377 has 7.30 GiB memory in use. Of the allocated memory 28.00 GiB is allocated by PyTorch, and 1.25 GiB is reserved by PyTorch but unallocated."

const kernelXidLine = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus."

// processors bundles both sides of one component id, built by one factory.
type processors struct {
	metrics processor.Metrics
	logs    processor.Logs
	msink   *consumertest.MetricsSink
	lsink   *consumertest.LogsSink
}

func newProcessors(t *testing.T, cfg *Config, set processor.Settings) processors {
	t.Helper()
	return newProcessorsClock(t, cfg, set, realClock{})
}

// newProcessorsClock is newProcessors on the given clock.
func newProcessorsClock(t *testing.T, cfg *Config, set processor.Settings, clk clock) processors {
	t.Helper()
	f := (&factory{clock: clk}).processorFactory()
	p := processors{msink: new(consumertest.MetricsSink), lsink: new(consumertest.LogsSink)}
	var err error
	p.metrics, err = f.CreateMetrics(context.Background(), set, cfg, p.msink)
	require.NoError(t, err)
	p.logs, err = f.CreateLogs(context.Background(), set, cfg, p.lsink)
	require.NoError(t, err)
	require.NoError(t, p.metrics.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.logs.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() {
		require.NoError(t, p.logs.Shutdown(context.Background()))
		require.NoError(t, p.metrics.Shutdown(context.Background()))
	})
	return p
}

func nopSettings() processor.Settings { return processortest.NewNopSettings(metadata.Type) }

func testConfig(wait time.Duration) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.DecisionWait = wait
	return cfg
}

// gpuMetrics is one collection of one GPU as the gpu_mem receiver sends it.
type gpuMetrics struct {
	host, hwID, busID string
	index             int64
	at                time.Time
	used, total       int64
	procs             map[int64]int64 // pid → bytes
}

func (g gpuMetrics) appendTo(md pmetric.Metrics) {
	rm := md.ResourceMetrics().AppendEmpty()
	res := rm.Resource().Attributes()
	if g.host != "" {
		res.PutStr(resHostName, g.host)
	}
	res.PutStr(attrHWID, g.hwID)
	res.PutStr(resHWName, fmt.Sprintf("GPU %d", g.index))
	res.PutStr(resHWModel, "NVIDIA A100-SXM4-40GB")
	res.PutInt(resGPUIndex, g.index)
	if g.busID != "" {
		res.PutStr(attrPCIBusID, g.busID)
	}
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	ts := pcommon.NewTimestampFromTime(g.at)
	sum := func(name string, v int64) pmetric.NumberDataPoint {
		m := ms.AppendEmpty()
		m.SetName(name)
		m.SetUnit("By")
		dp := m.SetEmptySum().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(v)
		return dp
	}
	sum(metricUsage, g.used)
	sum(metricLimit, g.total)
	sum(metricFree, g.total-g.used)
	pm := ms.AppendEmpty()
	pm.SetName(metricProcess)
	dps := pm.SetEmptySum().DataPoints()
	for pid, b := range g.procs {
		dp := dps.AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(b)
		dp.Attributes().PutInt(attrProcessPID, pid)
		dp.Attributes().PutStr(attrProcessName, "python3")
		dp.Attributes().PutStr(attrProcessType, "compute")
	}
	ug := ms.AppendEmpty()
	ug.SetName("hw.gpu.utilization") // not observed: must pass untouched
	ug.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(0.5)
}

func metricsOf(gs ...gpuMetrics) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for _, g := range gs {
		g.appendTo(md)
	}
	return md
}

// logsWith builds one resource (host.name = host) holding one record per body setter.
func logsWith(host string, at time.Time, bodies ...func(plog.LogRecord)) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	if host != "" {
		rl.Resource().Attributes().PutStr(resHostName, host)
	}
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for _, b := range bodies {
		rec := lrs.AppendEmpty()
		if !at.IsZero() {
			rec.SetTimestamp(pcommon.NewTimestampFromTime(at))
		}
		b(rec)
	}
	return ld
}

func text(s string) func(plog.LogRecord) {
	return func(r plog.LogRecord) { r.Body().SetStr(s) }
}

func firstRecord(ld plog.Logs) plog.LogRecord {
	return ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

func marshalLogs(t *testing.T, ld plog.Logs) []byte {
	t.Helper()
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	return b
}

var _ component.Config = (*Config)(nil)
var _ consumer.Logs = (*logsProcessor)(nil)

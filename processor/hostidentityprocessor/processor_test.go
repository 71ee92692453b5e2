package hostidentityprocessor

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor/internal/metadata"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pipelines are the three sides of one host_identity id, each ending in a sink.
type pipelines struct {
	traces  processor.Traces
	metrics processor.Metrics
	logs    processor.Logs
	ts      *consumertest.TracesSink
	ms      *consumertest.MetricsSink
	ls      *consumertest.LogsSink
	logged  *observer.ObservedLogs
}

func newPipelines(t *testing.T, cfg *Config, src sources) *pipelines {
	t.Helper()
	f := (&factory{src: src}).processorFactory()
	core, logged := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p := &pipelines{ts: new(consumertest.TracesSink), ms: new(consumertest.MetricsSink), ls: new(consumertest.LogsSink), logged: logged}
	var err error
	p.traces, err = f.CreateTraces(context.Background(), set, cfg, p.ts)
	require.NoError(t, err)
	p.metrics, err = f.CreateMetrics(context.Background(), set, cfg, p.ms)
	require.NoError(t, err)
	p.logs, err = f.CreateLogs(context.Background(), set, cfg, p.ls)
	require.NoError(t, err)
	return p
}

func (p *pipelines) components() []component.Component {
	return []component.Component{p.traces, p.metrics, p.logs}
}

func (p *pipelines) start(t *testing.T) {
	t.Helper()
	for _, c := range p.components() {
		require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	}
	t.Cleanup(func() {
		for _, c := range p.components() {
			assert.NoError(t, c.Shutdown(context.Background()))
		}
	})
}

func str(s string) *string { return &s }

// fill gives a resource a service.name and, unless hostName is nil, a host.name.
func fill(res pcommon.Resource, hostName *string) {
	res.Attributes().PutStr("service.name", "gpu")
	if hostName != nil {
		res.Attributes().PutStr("host.name", *hostName)
	}
}

// The host.name of each resource of each signal after the processor, in order.
func (p *pipelines) send(t *testing.T, hostNames ...*string) (traces, metrics, logs []string) {
	t.Helper()
	td := ptrace.NewTraces()
	md := pmetric.NewMetrics()
	ld := plog.NewLogs()
	for _, h := range hostNames {
		fill(td.ResourceSpans().AppendEmpty().Resource(), h)
		fill(md.ResourceMetrics().AppendEmpty().Resource(), h)
		fill(ld.ResourceLogs().AppendEmpty().Resource(), h)
	}
	require.NoError(t, p.traces.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), md))
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
	get := func(res pcommon.Resource) string {
		v, ok := res.Attributes().Get("host.name")
		if !ok {
			return "<absent>"
		}
		return v.Str()
	}
	out := p.ts.AllTraces()[len(p.ts.AllTraces())-1].ResourceSpans()
	for i := 0; i < out.Len(); i++ {
		traces = append(traces, get(out.At(i).Resource()))
	}
	om := p.ms.AllMetrics()[len(p.ms.AllMetrics())-1].ResourceMetrics()
	for i := 0; i < om.Len(); i++ {
		metrics = append(metrics, get(om.At(i).Resource()))
	}
	ol := p.ls.AllLogs()[len(p.ls.AllLogs())-1].ResourceLogs()
	for i := 0; i < ol.Len(); i++ {
		logs = append(logs, get(ol.At(i).Resource()))
	}
	return traces, metrics, logs
}

// Every signal gets the same host.name where it lacks one; a set one is never overwritten,
// an empty one is filled.
func TestAllSignalsNeverOverwrite(t *testing.T) {
	p := newPipelines(t, &Config{HostName: "gpu-node-7"}, fakeSources(nil, "machine", nil, nil))
	p.start(t)
	want := []string{"gpu-node-7", "from-sdk", "gpu-node-7"}
	traces, metrics, logs := p.send(t, nil, str("from-sdk"), str(""))
	assert.Equal(t, want, traces, "traces")
	assert.Equal(t, want, metrics, "metrics")
	assert.Equal(t, want, logs, "logs")

	// Other resource attributes are left as they were.
	v, ok := p.ms.AllMetrics()[0].ResourceMetrics().At(0).Resource().Attributes().Get("service.name")
	require.True(t, ok)
	assert.Equal(t, "gpu", v.Str())
}

// The precedence holds end to end, and the identity is resolved and logged once for the
// three sides of one id.
func TestPrecedenceThroughPipelines(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		cfg    Config
		want   string
		source string
	}{
		{name: "env", env: map[string]string{envResourceAttributes: "host.name=env-node"}, cfg: Config{HostName: "cfg-node"}, want: "env-node", source: sourceEnv},
		{name: "config", cfg: Config{HostName: "cfg-node"}, want: "cfg-node", source: sourceConfig},
		{name: "os", want: "machine", source: sourceOS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPipelines(t, &tt.cfg, fakeSources(tt.env, "machine", nil, nil))
			p.start(t)
			traces, metrics, logs := p.send(t, nil)
			assert.Equal(t, []string{tt.want}, traces)
			assert.Equal(t, []string{tt.want}, metrics)
			assert.Equal(t, []string{tt.want}, logs)

			entries := p.logged.FilterMessageSnippet("host_identity").AllUntimed()
			require.Len(t, entries, 1, "one start-up line for the three sides")
			assert.Equal(t, zapcore.InfoLevel, entries[0].Level)
			fields := entries[0].ContextMap()
			assert.Equal(t, tt.want, fields["host_name"])
			assert.Equal(t, tt.source, fields["source"])
			assert.NotContains(t, fields, "host_id")
		})
	}
}

func TestHostID(t *testing.T) {
	files := map[string]string{"/etc/machine-id": "abc123\n"}
	p := newPipelines(t, &Config{HostID: true}, fakeSources(nil, "machine", nil, files))
	p.start(t)

	md := pmetric.NewMetrics()
	md.ResourceMetrics().AppendEmpty()
	kept := md.ResourceMetrics().AppendEmpty().Resource().Attributes()
	kept.PutStr("host.id", "set-by-sdk")
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), md))
	out := p.ms.AllMetrics()[0].ResourceMetrics()
	got := func(i int) any { return out.At(i).Resource().Attributes().AsRaw()["host.id"] }
	assert.Equal(t, "abc123", got(0))
	assert.Equal(t, "set-by-sdk", got(1))
	fields := p.logged.All()[0].ContextMap()
	assert.Equal(t, "abc123", fields["host_id"])
	assert.Equal(t, "/etc/machine-id", fields["host_id_source"])

	// Asked for but not found: no host.id, and the start-up line says where it looked.
	p = newPipelines(t, &Config{HostID: true}, fakeSources(nil, "machine", nil, nil))
	p.start(t)
	md = pmetric.NewMetrics()
	md.ResourceMetrics().AppendEmpty()
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), md))
	_, ok := p.ms.AllMetrics()[0].ResourceMetrics().At(0).Resource().Attributes().Get("host.id")
	assert.False(t, ok)
	assert.Equal(t, "", p.logged.All()[0].ContextMap()["host_id"])
}

// A host with no name fails Start with the reason, on whichever side starts first.
func TestStartFailsWithoutAnyName(t *testing.T) {
	p := newPipelines(t, &Config{}, fakeSources(nil, "", errors.New("uname: EPERM"), nil))
	err := p.metrics.Start(context.Background(), componenttest.NewNopHost())
	assert.ErrorContains(t, err, "os.Hostname failed: uname: EPERM")
	for _, c := range p.components() {
		assert.NoError(t, c.Shutdown(context.Background()))
	}
}

// Shutdown is safe without Start, and the last side's Shutdown frees the id.
func TestShutdownWithoutStart(t *testing.T) {
	f := &factory{src: fakeSources(nil, "machine", nil, nil)}
	set := processortest.NewNopSettings(metadata.Type)
	m, err := f.processorFactory().CreateMetrics(context.Background(), set, createDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	l, err := f.processorFactory().CreateLogs(context.Background(), set, createDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	assert.Equal(t, 1, f.instances.Len())
	assert.NoError(t, m.Shutdown(context.Background()))
	assert.NoError(t, l.Shutdown(context.Background()))
	assert.Equal(t, 0, f.instances.Len())
}

func TestCapabilities(t *testing.T) {
	p := newPipelines(t, &Config{}, fakeSources(nil, "machine", nil, nil))
	assert.True(t, p.metrics.Capabilities().MutatesData)
	assert.True(t, p.logs.Capabilities().MutatesData)
	assert.True(t, p.traces.Capabilities().MutatesData)
	for _, c := range p.components() {
		assert.NoError(t, c.Shutdown(context.Background()))
	}
}

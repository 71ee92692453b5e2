package gpumemreceiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// counterValue is the sum of a counter's points, 0 when it has none yet.
func counterValue(t *testing.T, tt *componenttest.Telemetry, name string) int64 {
	t.Helper()
	m, err := tt.GetMetric(name)
	if err != nil {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is an int sum, got %T", name, m.Data)
	var v int64
	for _, dp := range sum.DataPoints {
		v += dp.Value
	}
	return v
}

// startTelemetry starts a receiver on fake NVML whose telemetry goes to tt and whose Xid
// records go to next.
func startTelemetry(t *testing.T, tt *componenttest.Telemetry, next consumer.Logs) (*gpuMemReceiver, *xidClock) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Xid.KmsgPath = ""
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tt.NewTelemetrySettings()
	r := newGPUMemReceiver(cfg, set)
	r.nextLogs = next
	lib := newFakeNVML(newFakeGPU(0))
	r.newBackend = func(*Config) (node.Node, error) { return node.Node{Lib: lib, ProcFS: fstest.MapFS{}}, nil }
	clock := newXidClock()
	clock.install(r)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	return r, clock
}

// Xid records go through receiverhelper.ObsReport: accepted and refused are counted with the
// receiver's id, like every receiver's.
func TestXidRecordsReportedThroughObsReport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		next     consumer.Logs
		counter  string
		otherOne string
	}{
		{"accepted", &consumertest.LogsSink{}, "otelcol_receiver_accepted_log_records", "otelcol_receiver_refused_log_records"},
		{"refused", consumertest.NewErr(errors.New("queue full")), "otelcol_receiver_refused_log_records", "otelcol_receiver_accepted_log_records"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
			r, clock := startTelemetry(t, tt, tc.next)
			r.backend.Lib.(*fakeNVML).events <- xidAt{device: 0, xid: 48}
			clock.settle(t, r.xids, 1)
			clock.pass(xidsource.MergeWindow)
			assert.Equal(t, int64(1), counterValue(t, tt, tc.counter))
			assert.Zero(t, counterValue(t, tt, tc.otherOne))
			m, err := tt.GetMetric(tc.counter)
			require.NoError(t, err)
			dp := m.Data.(metricdata.Sum[int64]).DataPoints[0]
			got, _ := dp.Attributes.Value(attribute.Key("receiver"))
			assert.Equal(t, r.set.ID.String(), got.AsString())
		})
	}
}

// An Xid dropped on a full queue is counted in the receiver's telemetry.
func TestXidDropsCounted(t *testing.T) {
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tt.NewTelemetrySettings()
	tel, err := newXidTelemetry(set)
	require.NoError(t, err)
	x := xidsource.New(xidsource.Options{Logger: zap.NewNop(), Now: time.Now, Dropped: tel.drop, QueueSize: 1})
	for range 4 {
		x.Add(xidsource.Event{Code: 31})
	}
	assert.Equal(t, int64(3), counterValue(t, tt, metadata.TelemetryXidEventsDropped.Name))
	assert.Equal(t, int64(3), x.Dropped())
}

// TestTelemetryInStep keeps the receiver's own telemetry in step across metadata.yaml,
// documentation.md and internal/metadata.
func TestTelemetryInStep(t *testing.T) {
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Telemetry struct {
			Metrics map[string]struct {
				Description string `yaml:"description"`
				Unit        string `yaml:"unit"`
				Sum         *struct {
					ValueType string `yaml:"value_type"`
					Monotonic bool   `yaml:"monotonic"`
				} `yaml:"sum"`
			} `yaml:"metrics"`
		} `yaml:"telemetry"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	doc, err := os.ReadFile("documentation.md")
	require.NoError(t, err)
	require.Len(t, md.Telemetry.Metrics, len(metadata.Telemetry))
	for _, def := range metadata.Telemetry {
		y, ok := md.Telemetry.Metrics[strings.TrimPrefix(def.Name, "otelcol_")]
		if !assert.True(t, ok, "%s missing from metadata.yaml", def.Name) {
			continue
		}
		assert.Equal(t, y.Description, def.Description)
		assert.Equal(t, y.Unit, def.Unit)
		require.NotNil(t, y.Sum, "%s is a counter", def.Name)
		assert.Contains(t, string(doc), fmt.Sprintf("| %s | %s | %s | Sum | Int | %t | Alpha |", def.Name, def.Description, def.Unit, y.Sum.Monotonic))
	}
}

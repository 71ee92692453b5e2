//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// This file holds what the OOM, Xid, gateway and demo tests share: flattened views of the
// file exporter's output, polling for records, and the configurations they run.

// record is one exported log record with its resource, flattened for assertions.
type record struct {
	Resource  map[string]any
	Attrs     map[string]any
	Body      string
	Time      time.Time // the record's Timestamp; zero when unset
	Observed  time.Time
	Severity  string
	EventName string
}

func (r record) String() string {
	return fmt.Sprintf("record{resource=%v attrs=%v body=%q}", r.Resource, r.Attrs, r.Body)
}

// logRecords reads every record of a file exporter's logs output.
func logRecords(t *testing.T, path string) []record {
	t.Helper()
	var out []record
	for _, ld := range e2eharness.ReadLogs(t, path) {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			res := rls.At(i).Resource().Attributes().AsRaw()
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					lr := lrs.At(k)
					r := record{
						Resource: res, Attrs: lr.Attributes().AsRaw(), Body: lr.Body().AsString(),
						Observed: lr.ObservedTimestamp().AsTime(), Severity: lr.SeverityText(),
						EventName: lr.EventName(),
					}
					if lr.Timestamp() != 0 {
						r.Time = lr.Timestamp().AsTime()
					}
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// isOOM: the oom_classifier recognised the record as a GPU out-of-memory error.
func isOOM(r record) bool { _, ok := r.Attrs["gpu.oom.framework"]; return ok }

// isXid: the record carries an Xid, from the receiver or annotated by the classifier.
func isXid(r record) bool { _, ok := r.Attrs["nvidia.gpu.xid"]; return ok }

func filter(recs []record, keep func(record) bool) []record {
	var out []record
	for _, r := range recs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// waitForRecords polls the logs file until at least n records satisfy keep, and returns them.
func waitForRecords(t *testing.T, c *collector, path string, timeout time.Duration, n int, what string, keep func(record) bool) []record {
	t.Helper()
	var got []record
	e2eharness.WaitFor(t, timeout, c, what, func() bool {
		got = filter(logRecords(t, path), keep)
		return len(got) >= n
	})
	return got
}

// point is one exported number data point with its resource.
type point struct {
	Resource map[string]any
	Metric   string
	Attrs    map[string]any
	Value    float64
	Time     time.Time
}

// metricPoints reads every sum and gauge point of a file exporter's metrics output.
func metricPoints(t *testing.T, path string) []point {
	t.Helper()
	var out []point
	for _, md := range e2eharness.ReadMetrics(t, path) {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			res := rms.At(i).Resource().Attributes().AsRaw()
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					var dps pmetric.NumberDataPointSlice
					switch m.Type() {
					case pmetric.MetricTypeSum:
						dps = m.Sum().DataPoints()
					case pmetric.MetricTypeGauge:
						dps = m.Gauge().DataPoints()
					default:
						continue
					}
					for d := 0; d < dps.Len(); d++ {
						dp := dps.At(d)
						v := dp.DoubleValue()
						if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
							v = float64(dp.IntValue())
						}
						out = append(out, point{Resource: res, Metric: m.Name(), Attrs: dp.Attributes().AsRaw(),
							Value: v, Time: dp.Timestamp().AsTime()})
					}
				}
			}
		}
	}
	return out
}

// latest returns the newest value of metric on the GPU hwID whose point attributes include
// attrs, and whether there was one.
func latest(points []point, metric, hwID string, attrs map[string]any) (float64, bool) {
	var best point
	found := false
outer:
	for _, p := range points {
		if p.Metric != metric || p.Resource["hw.id"] != hwID {
			continue
		}
		for k, v := range attrs {
			if p.Attrs[k] != v {
				continue outer
			}
		}
		if !found || !p.Time.Before(best.Time) {
			best, found = p, true
		}
	}
	return best.Value, found
}

// testdata returns the absolute path of a file under the repository's testdata.
func testdata(t *testing.T, elems ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"..", "..", "testdata"}, elems...)...))
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.NoError(t, err)
	return p
}

// gib and mib convert what a message prints ("2.15 GiB") to the exact bytes the
// classifier writes (documentation.md: rounded to the nearest byte).
func gib(v float64) int64 { return int64(math.Round(v * (1 << 30))) }
func mib(v float64) int64 { return int64(math.Round(v * (1 << 20))) }

// attrInt reads an int attribute of a flattened map (pcommon's AsRaw gives int64).
func attrInt(m map[string]any, key string) (int64, bool) {
	v, ok := m[key].(int64)
	return v, ok
}

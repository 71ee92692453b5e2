package oomclassifier

import (
	"context"
	"os"
	"reflect"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// These tests pin promises that small, plausible bugs would break silently: a threshold key
// that no longer reaches the classifier or reaches the wrong rule, the per-series cap keeping
// the oldest points, the metrics side claiming to mutate, a text location no longer searched.

// thresholdKeys lists the mapstructure keys of classify.Thresholds with their field index.
func thresholdKeys(t *testing.T) map[string]int {
	t.Helper()
	keys := map[string]int{}
	typ := reflect.TypeOf(classify.Thresholds{})
	for i := 0; i < typ.NumField(); i++ {
		if tag := typ.Field(i).Tag.Get("mapstructure"); tag != "" {
			keys[tag] = i
		}
	}
	require.NotEmpty(t, keys)
	return keys
}

// otherValue returns a value of v's type different from v, and its YAML form.
func otherValue(t *testing.T, v reflect.Value) (any, reflect.Value) {
	t.Helper()
	switch v.Interface().(type) {
	case time.Duration:
		d := v.Interface().(time.Duration) + 7*time.Second
		return d.String(), reflect.ValueOf(d)
	case int:
		n := v.Interface().(int) + 3
		return n, reflect.ValueOf(n)
	case int64:
		n := v.Interface().(int64) + 12345
		return n, reflect.ValueOf(n)
	case float64:
		f := v.Interface().(float64) * 0.75
		return f, reflect.ValueOf(f)
	case map[string]int64:
		m := map[string]int64{}
		for k, x := range v.Interface().(map[string]int64) {
			m[k] = x
		}
		m["Test GPU"] = 12345
		return map[string]any{"Test GPU": 12345}, reflect.ValueOf(m)
	}
	t.Fatalf("no test value for %s", v.Type())
	return nil, reflect.Value{}
}

// Every threshold key, set alone in the config, changes exactly its own field of the
// thresholds the classifier is given, and no other.
func TestEveryThresholdKeyReachesTheClassifier(t *testing.T) {
	def := classify.DefaultThresholds()
	for key, i := range thresholdKeys(t) {
		t.Run(key, func(t *testing.T) {
			yamlV, want := otherValue(t, reflect.ValueOf(def).Field(i))
			cfg := createDefaultConfig().(*Config)
			require.NoError(t, confmap.NewFromStringMap(map[string]any{"thresholds": map[string]any{key: yamlV}}).Unmarshal(cfg))
			got := newInstance(cfg, zap.NewNop(), nil, realClock{}).thresholds
			gv := reflect.ValueOf(got)
			assert.Equal(t, want.Interface(), gv.Field(i).Interface(), "%s reaches its field", key)
			for j := 0; j < gv.NumField(); j++ {
				if j != i && gv.Type().Field(j).IsExported() {
					assert.Equal(t, reflect.ValueOf(def).Field(j).Interface(), gv.Field(j).Interface(),
						"%s changed %s", key, gv.Type().Field(j).Name)
				}
			}
		})
	}
}

// The README lists every threshold key under its real name: a renamed tag would make a
// documented key silently ignored (confmap rejects unknown keys, but only those written).
func TestREADMEListsEveryThresholdKey(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)Every threshold key: (.*?)\\. The block").FindSubmatch(raw)
	require.NotNil(t, m)
	var doc []string
	for _, k := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllSubmatch(m[1], -1) {
		doc = append(doc, string(k[1]))
	}
	var code []string
	for k := range thresholdKeys(t) {
		code = append(code, k)
	}
	sort.Strings(doc)
	sort.Strings(code)
	assert.Equal(t, code, doc)
}

// causeWith classifies pytorchOOM at 300 s on host n after feed, under cfg's thresholds.
func causeWith(t *testing.T, edit func(*classify.Thresholds), feed func(*testing.T, processors)) string {
	t.Helper()
	cfg := testConfig(0)
	edit(&cfg.Thresholds)
	p := newProcessorsClock(t, cfg, nopSettings(), newFakeClock(t0.Add(300*time.Second)))
	feed(t, p)
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("n", t0.Add(299*time.Second), text(pytorchOOM))))
	return firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()[attrCause].(string)
}

// leak_min_points decides memory_leak: the ramp has 300 points.
func TestLeakMinPointsIsHonoured(t *testing.T) {
	assert.Equal(t, "memory_leak", causeWith(t, func(th *classify.Thresholds) { th.LeakMinPoints = 300 }, leakFor))
	assert.NotEqual(t, "memory_leak", causeWith(t, func(th *classify.Thresholds) { th.LeakMinPoints = 301 }, leakFor))
}

// zombieFor feeds one collection of GPU-0 on host n with 7 GiB used by no listed process.
func zombieFor(t *testing.T, p processors) {
	t.Helper()
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
		host: "n", hwID: "GPU-0", at: t0.Add(299 * time.Second), used: 39 * gib, total: 40 * gib,
		procs: map[int64]int64{3101: 30 * gib, 3377: 2 * gib}})))
}

// The zombie rule reads the zombie thresholds, bytes and fraction, and not the tenant ones.
func TestZombieThresholdsAreTheirOwn(t *testing.T) {
	none := func(*classify.Thresholds) {}
	require.Equal(t, "zombie_context", causeWith(t, none, zombieFor), "7 GiB unattributed of 40 GiB")
	assert.NotEqual(t, "zombie_context", causeWith(t, func(th *classify.Thresholds) { th.ZombieMinBytes = 8 * gib }, zombieFor))
	assert.Equal(t, "zombie_context", causeWith(t, func(th *classify.Thresholds) { th.ZombieMinBytes = 6 * gib }, zombieFor))
	assert.NotEqual(t, "zombie_context", causeWith(t, func(th *classify.Thresholds) { th.ZombieMinFraction = 0.2 }, zombieFor))
	assert.Equal(t, "zombie_context", causeWith(t, func(th *classify.Thresholds) { th.ZombieMinFraction = 0.15 }, zombieFor))
	assert.Equal(t, "zombie_context", causeWith(t, func(th *classify.Thresholds) {
		th.TenantMinBytes, th.TenantMinFraction = 30*gib, 0.9
	}, zombieFor), "tenant thresholds do not gate the zombie rule")
}

// At the per-series cap the window keeps the newest points, the ones around the OOM.
func TestSampleCapKeepsNewest(t *testing.T) {
	cfg := testConfig(0)
	cfg.MaxSamplesPerGPU = 50
	p := newProcessorsClock(t, cfg, nopSettings(), newFakeClock(t0.Add(300*time.Second)))
	leakFor(t, p)
	var snap window.Snapshot
	store := p.logs.(*logsProcessor).inst.store
	require.True(t, store.SnapshotTo(&snap, window.Query{Host: "n", At: t0.Add(299 * time.Second), PID: 3101, DeviceIndex: -1}))
	require.Len(t, snap.Usage, 50)
	assert.Equal(t, t0.Add(250*time.Second).UnixNano(), snap.Usage[0].T, "the oldest kept point")
	assert.Equal(t, t0.Add(299*time.Second).UnixNano(), snap.Usage[49].T, "the newest point")
}

// The metrics side only reads: it must not make the pipeline copy data for it.
func TestMetricsSideDoesNotMutate(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	assert.False(t, p.metrics.Capabilities().MutatesData)
	assert.True(t, p.logs.Capabilities().MutatesData, "the logs side writes attributes")
}

// An OOM found only in exception.stacktrace (no message, no body) is still recognised.
func TestExceptionStacktraceIsSearched(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	rec := func(r plog.LogRecord) {
		r.Attributes().PutStr(attrExceptionST, "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"+pytorchOOM+"\n")
	}
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("n", t0, rec)))
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, "pytorch", attrs[attrFramework])
	assert.Equal(t, int64(4*gib), attrs[attrRequestedBytes])
}

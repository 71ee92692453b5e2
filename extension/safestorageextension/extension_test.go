package safestorageextension

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/extension/safestorageextension/internal/metadata"
)

var exporterID = component.MustNewID("otlp_grpc")

type started struct {
	ext    *safeStorage
	client storage.Client
	logs   *observer.ObservedLogs
	tel    *componenttest.Telemetry
}

// start creates the extension on dir as the collector would, starts it and opens the client an
// exporter's sending queue would.
func start(t *testing.T, dir string) started {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = dir
	cfg.CheckTimeout = time.Minute
	cfg.CreateDirectory = true
	require.NoError(t, cfg.Config.Validate())
	require.NoError(t, cfg.Validate())
	core, logs := observer.New(zapcore.InfoLevel)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := extensiontestSettings()
	set.Logger = zap.New(core)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	set.Logger = zap.New(core)
	e, err := NewFactory().Create(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), componenttest.NewNopHost()))
	s := e.(*safeStorage)
	c, err := s.GetClient(context.Background(), component.KindExporter, exporterID, "logs")
	require.NoError(t, err)
	return started{ext: s, client: c, logs: logs, tel: tel}
}

func (s started) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, s.client.Close(context.Background()))
	require.NoError(t, s.ext.Shutdown(context.Background()))
}

// fill writes n 4 KiB values, as a sending queue holding n requests would.
func fill(t *testing.T, c storage.Client, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		v := make([]byte, 4096)
		_, _ = rand.Read(v)
		require.NoError(t, c.Set(context.Background(), fmt.Sprint(i), v))
	}
}

func overwrite(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// The damage a power loss or a full disk leaves in a bbolt file, and whether the file is
// still good (bbolt keeps two meta pages: one of them lost costs the last transaction only).
var damages = []struct {
	name    string
	damage  func(t *testing.T, path string, size int64)
	discard string // the counter's damage attribute; empty: the file is kept
}{
	{"truncated", func(t *testing.T, path string, size int64) { require.NoError(t, os.Truncate(path, size/2)) }, "corrupt"},
	{"garbage_in_middle", func(t *testing.T, path string, size int64) {
		junk := make([]byte, size/3)
		_, _ = rand.Read(junk)
		overwrite(t, path, size/3, junk)
	}, "corrupt"},
	{"both_meta_pages_zeroed", func(t *testing.T, path string, _ int64) {
		overwrite(t, path, 0, make([]byte, 2*os.Getpagesize()))
	}, "corrupt"},
	{"zero_bytes", func(t *testing.T, path string, _ int64) { require.NoError(t, os.Truncate(path, 0)) }, "empty"},
	{"first_meta_page_zeroed", func(t *testing.T, path string, _ int64) {
		overwrite(t, path, 0, make([]byte, os.Getpagesize()))
	}, ""},
}

// TestDamagedDatabase: each damage, on a file file_storage wrote, then the extension started
// again on it. A damaged file is moved aside as <name>.<time>.corrupt, logged once at ERROR
// with the file and what it held, counted, and the component gets a fresh, working database;
// a file bbolt can still read is kept with its data.
func TestDamagedDatabase(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			first := start(t, dir)
			fill(t, first.client, 300)
			first.stop(t)
			files, err := filepath.Glob(filepath.Join(dir, "exporter_otlp_grpc*"))
			require.NoError(t, err)
			require.Len(t, files, 1)
			path := files[0]
			info, err := os.Stat(path)
			require.NoError(t, err)
			d.damage(t, path, info.Size())

			again := start(t, dir)
			defer again.stop(t)
			errs := again.logs.FilterLevelExact(zapcore.ErrorLevel).All()
			moved, err := filepath.Glob(path + ".*" + corruptSuffix)
			require.NoError(t, err)
			v, err := again.client.Get(context.Background(), "7")
			require.NoError(t, err, "the component's database works")
			if d.discard == "" {
				assert.Empty(t, errs)
				assert.Empty(t, moved)
				assert.Equal(t, 1, again.logs.FilterMessageSnippet("meta pages is damaged").Len(), "one WARN")
				assert.Len(t, v, 4096, "the data is kept")
				_, err := again.tel.GetMetric(metadata.MetricDatabasesDiscarded)
				assert.Error(t, err, "nothing counted")
				return
			}
			require.Len(t, moved, 1, "the damaged file is moved aside")
			assert.Nil(t, v, "a fresh database")
			require.Len(t, errs, 1, "one ERROR line")
			fields := errs[0].ContextMap()
			assert.Equal(t, path, fields["file"])
			assert.Equal(t, moved[0], fields["moved_to"])
			assert.NotEmpty(t, fields["damage"])
			t.Logf("%s: %s", d.name, fields["damage"])
			metricdatatest.AssertEqual(t, metricdata.Metrics{
				Name:        metadata.MetricDatabasesDiscarded,
				Description: "Damaged storage database files moved aside at start; what each held is lost. [Alpha]",
				Unit:        "{file}",
				Data: metricdata.Sum[int64]{
					Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[int64]{{Value: 1, Attributes: attribute.NewSet(attribute.String("damage", d.discard))}},
				},
			}, mustMetric(t, again.tel), metricdatatest.IgnoreTimestamp())
			require.NoError(t, again.client.Set(context.Background(), "new", []byte("x")))
		})
	}
}

func mustMetric(t *testing.T, tel *componenttest.Telemetry) metricdata.Metrics {
	t.Helper()
	m, err := tel.GetMetric(metadata.MetricDatabasesDiscarded)
	require.NoError(t, err)
	return m
}

// A healthy file, a directory that does not exist yet, and the files that are no component's
// (compaction's temporary copies, files already moved aside) are left alone.
func TestHealthyAndForeignFilesLeftAlone(t *testing.T) {
	dir := t.TempDir()
	first := start(t, dir)
	fill(t, first.client, 10)
	first.stop(t)
	for _, n := range []string{"tempdb123", "exporter_x.20260101T000000Z.corrupt", "exporter_x.20260101T000000.000Z.backup"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o600))
	}
	before, err := os.ReadDir(dir)
	require.NoError(t, err)
	again := start(t, dir)
	defer again.stop(t)
	after, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Equal(t, len(before), len(after))
	assert.Zero(t, again.logs.FilterLevelExact(zapcore.ErrorLevel).Len())
	v, err := again.client.Get(context.Background(), "3")
	require.NoError(t, err)
	assert.Len(t, v, 4096)

	fresh := start(t, filepath.Join(t.TempDir(), "not-yet"))
	fresh.stop(t)
}

// A check that decides nothing (the file held by another process, a check cut short) leaves
// the file where it is, with a WARN.
func TestUndecidedCheckKeepsFile(t *testing.T) {
	dir := t.TempDir()
	first := start(t, dir)
	fill(t, first.client, 10)
	first.stop(t)
	path, err := filepath.Glob(filepath.Join(dir, "exporter_*"))
	require.NoError(t, err)
	v := checkInChild(context.Background(), path[0], time.Nanosecond, time.Second)
	assert.Equal(t, statusUndecided, v.Status, v.Damage)

	s := &safeStorage{cfg: &Config{CheckTimeout: time.Minute}, logger: zap.NewNop(), now: time.Now}
	s.cfg.Directory = dir
	core, logs := observer.New(zapcore.WarnLevel)
	s.logger = zap.New(core)
	s.check = func(context.Context, string, time.Duration, time.Duration) verdict {
		return verdict{Status: statusUndecided, Damage: "held"}
	}
	require.NoError(t, s.guard(context.Background()))
	assert.FileExists(t, path[0])
	require.Equal(t, 1, logs.Len())
	assert.True(t, strings.HasPrefix(logs.All()[0].Message, "Could not check"))
}

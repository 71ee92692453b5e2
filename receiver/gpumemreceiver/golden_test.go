package gpumemreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"
)

// Regenerate after a deliberate change to what the receiver emits:
//
//	go test ./receiver/gpumemreceiver -run TestGoldenScrape -update-golden
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/*.json")

// TestGoldenScrape pins the whole output of one scrape of the built-in scenario, at a fixed
// scenario time, to a golden file: every metric, attribute, value and resource of 8 GPUs and
// their MIG instances. A change to any of it shows up as a diff to review.
func TestGoldenScrape(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clock := start.Add(35 * time.Second) // past the Xid on GPU 2, mid-way up GPU 3's leak
	now := func() time.Time { return clock }

	cfg := createDefaultConfig().(*Config)
	cfg.Backend = node.Simulated
	cfg.Xid.KmsgPath = ""
	cfg.Xid.NVMLEvents = false
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	r.now = now
	r.newBackend = func(*Config) (node.Node, error) {
		sim, err := simnvml.New(simnvml.BuiltinScenario(), simnvml.Options{Now: now, Start: start})
		if err != nil {
			return node.Node{}, err
		}
		return node.Node{Lib: sim, ProcFS: sim.ProcFS()}, nil
	}
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	got, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(md)
	require.NoError(t, err)

	path := filepath.Join("testdata", "golden", "builtin_scrape.json")
	if *updateGolden {
		var pretty bytes.Buffer
		require.NoError(t, json.Indent(&pretty, got, "", "    "))
		require.NoError(t, os.WriteFile(path, append(pretty.Bytes(), '\n'), 0o600))
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update-golden to create it")
	want, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(raw)
	require.NoError(t, err)
	// CompareMetrics names the resource, metric and data point that differ, where a JSON diff
	// of 8 GPUs would show only lines.
	require.NoError(t, pmetrictest.CompareMetrics(want, md))
}

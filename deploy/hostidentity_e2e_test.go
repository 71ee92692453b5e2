//go:build e2e

package deploy_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// TestPrometheusConfigNamesItsHost runs deploy/prometheus/collector.yaml as a newcomer would,
// with no HOST_NAME (nor OTEL_RESOURCE_ATTRIBUTES) set, on the simulated built-in scenario.
// It must start, and the GPU metrics, the collector's own metrics, the scenario's Xid record
// (20 s) and its classified OOM (50 s) must all carry the machine's hostname as host.name;
// the OOM matched to a GPU shows that oom_classifier found that node's metrics under it.
// The test adds only the scenario's log directory and a file exporter beside the logs
// pipeline's debug exporter, to read the records back.
func TestPrometheusConfigNamesItsHost(t *testing.T) {
	hostname, err := os.Hostname()
	require.NoError(t, err)
	dir := t.TempDir()
	appLogs := filepath.Join(dir, "app")
	require.NoError(t, os.Mkdir(appLogs, 0o700))
	records := filepath.Join(dir, "records.jsonl")
	exporterPort, telemetryPort := e2eharness.FreePort(t), e2eharness.FreePort(t)

	col := exec.Command(e2eharness.Binary(t), "--config", "prometheus/collector.yaml",
		"--config", "yaml:receivers::gpu_mem::simulated::log_dir: "+appLogs,
		"--config", "yaml:exporters::file/records::path: "+records,
		"--config", "yaml:exporters::file/records::flush_interval: 100ms",
		"--config", "yaml:service::pipelines::logs::exporters: [debug, file/records]")
	col.Env = []string{ // no HOST_NAME, no OTEL_RESOURCE_ATTRIBUTES
		"PATH=" + os.Getenv("PATH"),
		"GPUMEM_BACKEND=simulated",
		fmt.Sprintf("PROMETHEUS_ENDPOINT=127.0.0.1:%d", exporterPort),
		"TELEMETRY_HOST=127.0.0.1",
		fmt.Sprintf("TELEMETRY_PORT=%d", telemetryPort),
		"JOB_LOGS=" + filepath.Join(appLogs, "*.log"),
	}
	proc := e2eharness.StartCmd(t, "collector", col)

	// It starts (no AttrProc error) and says which name it took, from where.
	var gpuSeries string
	e2eharness.WaitFor(t, 30*time.Second, proc, "GPU series on the Prometheus endpoint", func() bool {
		body, err := scrape(exporterPort)
		if err == nil && strings.Contains(body, "hw_gpu_memory_limit_bytes{") {
			gpuSeries = body
		}
		return gpuSeries != ""
	})
	assert.NotContains(t, proc.Output(), "AttrProc")
	assert.Contains(t, proc.Output(), "host_identity: resources without host.name get this one")
	assert.Regexp(t, `"host_name": "`+regexp.QuoteMeta(hostname)+`", "source": "os"`, proc.Output())

	// Every GPU series, and every series of the collector's own metrics, carries it.
	assert.Equal(t, []string{hostname}, hostLabels(t, gpuSeries, "hw_gpu_memory_limit_bytes{"), "GPU metrics")
	assert.Equal(t, []string{hostname}, hostLabels(t, gpuSeries, "nvidia_gpu_process_memory_usage_bytes{"), "per-process metrics")
	own, err := scrape(telemetryPort)
	require.NoError(t, err)
	assert.Equal(t, []string{hostname}, hostLabels(t, own, "otelcol_"), "the collector's own metrics")

	// The Xid record and the classified OOM carry the same name, and the OOM met its GPU.
	var xid, oom plog.ResourceLogs
	require.Eventually(t, func() bool {
		xid, oom = findRecords(t, records)
		return xid != (plog.ResourceLogs{}) && oom != (plog.ResourceLogs{})
	}, 120*time.Second, time.Second, "the scenario's Xid record (20 s) and classified OOM (50 s)")
	for name, rl := range map[string]plog.ResourceLogs{"Xid record": xid, "OOM record": oom} {
		v, ok := rl.Resource().Attributes().Get("host.name")
		require.True(t, ok, "%s: host.name", name)
		assert.Equal(t, hostname, v.Str(), "%s: host.name", name)
	}
	rec := oom.ScopeLogs().At(0).LogRecords().At(0)
	for i := 0; i < oom.ScopeLogs().Len(); i++ {
		for j := 0; j < oom.ScopeLogs().At(i).LogRecords().Len(); j++ {
			if _, ok := oom.ScopeLogs().At(i).LogRecords().At(j).Attributes().Get("gpu.oom.cause"); ok {
				rec = oom.ScopeLogs().At(i).LogRecords().At(j)
			}
		}
	}
	match, _ := rec.Attributes().Get("gpu.oom.match")
	assert.NotEqual(t, "none", match.AsString(), "the OOM found its node's GPU metrics under the same host.name")
	hwID, ok := rec.Attributes().Get("hw.id")
	assert.True(t, ok && hwID.Str() != "", "the OOM names its GPU")
}

func scrape(port int) (string, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// hostLabels returns the distinct host_name labels of the series in a scrape whose name starts
// with prefix ("" for a series without one); at least one series must be there.
func hostLabels(t *testing.T, body, prefix string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	label := regexp.MustCompile(`[{,]host_name="([^"]*)"`)
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		h := ""
		if m := label.FindStringSubmatch(line); m != nil {
			h = m[1]
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	require.NotEmpty(t, out, "no %s series", prefix)
	return out
}

// findRecords reads the file exporter's OTLP JSON lines and returns the resource of the
// first Xid record (event nvidia.gpu.xid) and of the first classified OOM (gpu.oom.cause).
func findRecords(t *testing.T, path string) (xid, oom plog.ResourceLogs) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		return xid, oom
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	var u plog.JSONUnmarshaler
	for sc.Scan() {
		ld, err := u.UnmarshalLogs(sc.Bytes())
		if err != nil {
			continue // a line being written
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					lr := lrs.At(k)
					if lr.EventName() == "nvidia.gpu.xid" && xid == (plog.ResourceLogs{}) {
						xid = rl
					}
					if _, ok := lr.Attributes().Get("gpu.oom.cause"); ok && oom == (plog.ResourceLogs{}) {
						oom = rl
					}
				}
			}
		}
	}
	return xid, oom
}

//go:build e2e

package deploy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// promServer is a real Prometheus scraping the distribution, both started by the test.
type promServer struct {
	api     string    // http://127.0.0.1:port
	started time.Time // when the collector started
}

// prometheusBinary is $PROMETHEUS_BIN, else prometheus on PATH. Without one the test is
// skipped on a workstation and fails in CI, where .ci/run installs Debian's package.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS_BIN"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed: .ci/run installs Debian's prometheus package")
		}
		t.Skip("prometheus not installed (apt-get install prometheus); CI runs this test")
	}
	return p
}

// startPrometheusStack runs deploy/prometheus/collector.yaml on the simulated built-in
// scenario and a Prometheus that scrapes it (its GPU metrics and its own telemetry) every
// second with alerts.yaml loaded. The scenario's application writes its log lines (the OOM
// at 50 s) where the configuration's file_log reads them: the one line the test adds.
func startPrometheusStack(t *testing.T, extraEnv ...string) *promServer {
	t.Helper()
	promBin := prometheusBinary(t)
	dir := t.TempDir()
	appLogs := filepath.Join(dir, "app")
	require.NoError(t, os.Mkdir(appLogs, 0o700))
	exporterPort, telemetryPort, promPort := e2eharness.FreePort(t), e2eharness.FreePort(t), e2eharness.FreePort(t)

	col := exec.Command(e2eharness.Binary(t), "--config", "prometheus/collector.yaml",
		"--config", "yaml:receivers::gpu_mem::simulated::log_dir: "+appLogs)
	col.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"GPUMEM_BACKEND=simulated",
		"HOST_NAME=gpu-node-1",
		fmt.Sprintf("PROMETHEUS_ENDPOINT=127.0.0.1:%d", exporterPort),
		"TELEMETRY_HOST=127.0.0.1",
		fmt.Sprintf("TELEMETRY_PORT=%d", telemetryPort),
		"JOB_LOGS=" + filepath.Join(appLogs, "*.log"),
	}, extraEnv...)
	started := time.Now()
	e2eharness.StartCmd(t, "otelcol-gpumem", col)

	rules, err := filepath.Abs("prometheus/alerts.yaml")
	require.NoError(t, err)
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: otelcol-gpumem
    static_configs:
      - targets: ["127.0.0.1:%d"]
  - job_name: otelcol-gpumem-self
    static_configs:
      - targets: ["127.0.0.1:%d"]
`, rules, exporterPort, telemetryPort)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	prom := exec.Command(promBin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort),
	)
	e2eharness.StartCmd(t, "prometheus", prom)
	return &promServer{api: fmt.Sprintf("http://127.0.0.1:%d", promPort), started: started}
}

// sample is one element of an instant vector.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s sample) float(t *testing.T) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s.Value[1].(string), 64)
	require.NoError(t, err)
	return v
}

// query runs an instant PromQL query; an error answer fails the test.
func (p *promServer) query(t *testing.T, q string) []sample {
	t.Helper()
	res, err := p.tryQuery(q)
	require.NoError(t, err, "query %s", q)
	return res
}

func (p *promServer) tryQuery(q string) ([]sample, error) {
	var res []sample
	err := p.get("/api/v1/query?query="+url.QueryEscape(q), "vector", &res)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	return res, nil
}

// series is one element of a range query's matrix.
type series struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

// queryRange runs q over [from, to] at step 1s, as a Grafana panel does; an error fails the test.
func (p *promServer) queryRange(t *testing.T, q string, from, to time.Time) []series {
	t.Helper()
	var res []series
	path := fmt.Sprintf("/api/v1/query_range?query=%s&start=%d&end=%d&step=1", url.QueryEscape(q), from.Unix(), to.Unix())
	require.NoError(t, p.get(path, "matrix", &res), "query_range %s", q)
	return res
}

// get decodes the result of a Prometheus API call whose result type must be want.
func (p *promServer) get(path, want string, result any) error {
	resp, err := http.Get(p.api + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	if body.Status != "success" {
		return errors.New(body.Error)
	}
	if body.Data.ResultType != want {
		return fmt.Errorf("result type %s, want %s", body.Data.ResultType, want)
	}
	return json.Unmarshal(body.Data.Result, result)
}

// waitQuery polls q until check accepts its result.
func (p *promServer) waitQuery(t *testing.T, timeout time.Duration, q string, check func([]sample) bool) []sample {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last []sample
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = p.tryQuery(q)
		if lastErr == nil && check(last) {
			return last
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("timed out waiting on %s: last answer %v, error %v", q, last, lastErr)
	return nil
}

const gib = 1 << 30

// TestPrometheus scrapes the distribution on the built-in scenario (8 GPUs, GPU 7 split into
// 4 MIG instances, 30 processes) with a real Prometheus and checks what a PromQL user sees:
// one series per GPU, MIG instance and process, with the labels and values of the scenario.
func TestPrometheus(t *testing.T) {
	p := startPrometheusStack(t)
	p.waitQuery(t, 30*time.Second, `count(hw_gpu_memory_usage_bytes)`, func(s []sample) bool {
		return len(s) == 1 && s[0].float(t) == 12
	})

	t.Run("one series per device", func(t *testing.T) {
		for _, q := range []string{
			`count by (hw_id) (hw_gpu_memory_usage_bytes) > 1`,
			`count by (hw_id, process_pid) (nvidia_gpu_process_memory_usage_bytes) > 1`,
		} {
			assert.Empty(t, p.query(t, q), "%s: a series per device", q)
		}
		assert.Len(t, p.query(t, `hw_gpu_memory_limit_bytes`), 12, "8 GPUs and 4 MIG instances")
		assert.Len(t, p.query(t, `hw_gpu_memory_limit_bytes{hw_parent=""}`), 8, "8 GPUs")
		assert.Len(t, p.query(t, `hw_gpu_memory_limit_bytes{hw_parent="GPU-8daf4161-e384-40a5-4363-0b3032ff7f6e"}`), 4, "GPU 7's 4 MIG instances")
		// 5 + 5 on GPUs 0 and 1, 1 on 2 (until 21 s), 3 and 5, 12 on 4, 2 on 6, 3 on the MIG instances.
		assert.Len(t, p.query(t, `nvidia_gpu_process_memory_usage_bytes`), 30)
		assert.Len(t, p.query(t, `nvidia_gpu_process_memory_usage_bytes{host_name="gpu-node-1"}`), 30, "host.name on every series")
	})

	t.Run("labels and values", func(t *testing.T) {
		s := p.query(t, `nvidia_gpu_process_memory_usage_bytes{process_pid="45001"}`)
		require.Len(t, s, 1)
		assert.Equal(t, float64(70*gib), s[0].float(t))
		for k, v := range map[string]string{
			"hw_id": "GPU-7166f009-1934-30d4-ea53-7c15fa716792", "nvidia_gpu_index": "5",
			"nvidia_gpu_pci_bus_id": "00000000:AB:00.0", "process_executable_name": "python3",
			"container_id": "0ad10bf1771aed7c94e3e9294deda05e5c84915a8bdd09e09d662c1ad2ad3e29",
			"k8s_pod_uid":  "edf97b90-b357-202e-c3eb-a5ec5297c268", "process_vpid": "1",
			"nvidia_gpu_process_type": "compute", "host_name": "gpu-node-1",
		} {
			assert.Equal(t, v, s[0].Metric[k], k)
		}
		s = p.query(t, `nvidia_gpu_memory_unattributed_bytes{nvidia_gpu_index="5"}`)
		require.Len(t, s, 1)
		assert.Equal(t, float64(6*gib), s[0].float(t), "GPU 5's zombie context")

		s = p.query(t, `hw_gpu_memory_limit_bytes{nvidia_gpu_mig_profile="2g.20gb"}`)
		require.Len(t, s, 1)
		assert.Equal(t, float64(19968<<20), s[0].float(t))
		assert.Equal(t, "3", s[0].Metric["nvidia_gpu_mig_gpu_instance_id"])
		s = p.query(t, `nvidia_gpu_process_memory_usage_bytes{process_pid="47101"}`)
		require.Len(t, s, 1)
		assert.Equal(t, "MIG-3190be24-a07b-4ffd-4363-06faa7eeadc4", s[0].Metric["hw_id"], "a MIG process is on its instance")
		assert.Equal(t, float64(12*gib), s[0].float(t))

		s = p.query(t, `sum(nvidia_gpu_process_memory_usage_bytes{nvidia_gpu_index="4"})`)
		require.Len(t, s, 1)
		assert.Equal(t, float64(12*1536<<20), s[0].float(t), "GPU 4's 12 gunicorn workers")
	})

	t.Run("names read right", func(t *testing.T) {
		for _, q := range []string{`nvidia_gpu_ecc_mode`, `nvidia_gpu_memory_remapped_rows_pending`,
			`nvidia_gpu_memory_remapped_rows_failed`, `nvidia_gpu_memory_retired_pages_pending`} {
			assert.Len(t, p.query(t, q), 8, "%s: one per GPU", q)
		}
		s := p.query(t, `count by (__name__) ({__name__=~".+_ratio"})`)
		var ratios []string
		for _, x := range s {
			ratios = append(ratios, x.Metric["__name__"])
		}
		assert.ElementsMatch(t, []string{"hw_gpu_memory_utilization_ratio", "hw_gpu_utilization_ratio",
			"nvidia_gpu_process_utilization_ratio"}, ratios,
			"only fractions end in _ratio")
	})

	t.Run("alert rules load and evaluate", func(t *testing.T) {
		resp, err := http.Get(p.api + "/api/v1/rules")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Groups []struct {
					Name  string `json:"name"`
					Rules []struct {
						Name      string `json:"name"`
						Health    string `json:"health"`
						LastError string `json:"lastError"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"data"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		// Prometheus lists the groups in its own order: compare by name.
		want := map[string]int{}
		for _, g := range loadRuleGroups(t) {
			want[g.Name] = len(g.Rules)
		}
		require.Len(t, body.Data.Groups, len(want))
		for _, g := range body.Data.Groups {
			require.Contains(t, want, g.Name)
			assert.Len(t, g.Rules, want[g.Name], "group %s", g.Name)
			for _, r := range g.Rules {
				assert.NotEqual(t, "err", r.Health, "%s: %s", r.Name, r.LastError)
			}
		}
		// GPU 5's 6 GiB zombie is already pending (for: 5m).
		p.waitQuery(t, 10*time.Second, `ALERTS{alertname="GPUMemoryHeldByNoProcess",nvidia_gpu_index="5"}`, func(s []sample) bool { return len(s) == 1 })
	})
}

package deploy_test

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// contractMetrics are receiver metrics the rules and the dashboard use before
// receiver/gpumemreceiver/metadata.yaml declares them: the
// Prometheus name each must get, by its OpenTelemetry name. Once metadata.yaml declares one,
// the name its unit and type give must be this one.
var contractMetrics = map[string]string{
	"nvidia_gpu_allocation":                   "nvidia.gpu.allocation", // gauge, unit {allocation}
	"nvidia_gpu_allocation_idle_time_seconds": "nvidia.gpu.allocation.idle_time",
	"nvidia_gpu_process_unexpected_count":     "nvidia.gpu.process.unexpected.count",
}

// promName is the name the prometheus exporter gives a metric (otlptranslator's
// UnderscoreEscapingWithSuffixes, the exporter's default): dots to underscores, the unit's
// word appended unless the name ends with it, _ratio for gauges of unit 1, _total for
// monotonic sums. Annotations ({process}) are dropped.
func promName(name, unit, typ string, monotonic bool) string {
	out := strings.ReplaceAll(name, ".", "_")
	words := map[string]string{"By": "bytes", "s": "seconds", "By/s": "bytes_per_second", "ms": "milliseconds"}
	if w, ok := words[unit]; ok && !strings.HasSuffix(out, "_"+w) {
		out += "_" + w
	}
	if unit == "1" && typ == "gauge" && !strings.HasSuffix(out, "_ratio") {
		out += "_ratio"
	}
	if typ == "sum" && monotonic && !strings.HasSuffix(out, "_total") {
		out += "_total"
	}
	return out
}

func TestPromName(t *testing.T) {
	assert.Equal(t, "hw_gpu_memory_usage_bytes", promName("hw.gpu.memory.usage", "By", "sum", false))
	assert.Equal(t, "hw_gpu_utilization_ratio", promName("hw.gpu.utilization", "1", "gauge", false))
	assert.Equal(t, "hw_status", promName("hw.status", "1", "sum", false))
	assert.Equal(t, "nvidia_gpu_xid_errors_total", promName("nvidia.gpu.xid.errors", "{error}", "sum", true))
	assert.Equal(t, "nvidia_gpu_process_memory_growth_bytes_per_second", promName("nvidia.gpu.process.memory.growth", "By/s", "gauge", false))
	assert.Equal(t, "nvidia_gpu_ecc_mode", promName("nvidia.gpu.ecc.mode", "{gpu}", "gauge", false))
}

// receiverPromNames maps each metric metadata.yaml declares to its Prometheus name.
func receiverPromNames(t *testing.T) (byProm map[string]string, byOtel map[string]string) {
	t.Helper()
	raw, err := os.ReadFile("../receiver/gpumemreceiver/metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Metrics map[string]struct {
			Unit  string `yaml:"unit"`
			Gauge any    `yaml:"gauge"`
			Sum   *struct {
				Monotonic bool `yaml:"monotonic"`
			} `yaml:"sum"`
		} `yaml:"metrics"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	byProm, byOtel = map[string]string{}, map[string]string{}
	for name, m := range md.Metrics {
		typ, mono := "gauge", false
		if m.Sum != nil {
			typ, mono = "sum", m.Sum.Monotonic
		}
		p := promName(name, m.Unit, typ, mono)
		byProm[p], byOtel[name] = name, p
	}
	return byProm, byOtel
}

// promMetricNames returns the receiver metric names (hw_*, nvidia_*) a PromQL expression
// selects: label names inside {...} and by/on/without/ignoring/group_x (...), string
// literals and the label of Grafana's label_values are left out.
func promMetricNames(expr string) []string {
	lits := regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	expr = lits.ReplaceAllString(expr, `""`)
	matchers := regexp.MustCompile(`\{[^}]*\}`)
	expr = matchers.ReplaceAllString(expr, "{}")
	grouping := regexp.MustCompile(`\b(?:by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)`)
	expr = grouping.ReplaceAllString(expr, "")
	// Grafana's label_values(selector, label): the label is no metric.
	expr = regexp.MustCompile(`^label_values\((.*),\s*\w+\)$`).ReplaceAllString(expr, "$1")
	ident := regexp.MustCompile(`(?:^|[^a-zA-Z0-9_:])((?:hw|nvidia)_[a-z0-9_]+)\b`)
	var out []string
	for _, m := range ident.FindAllStringSubmatch(expr, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestPromMetricNames(t *testing.T) {
	got := promMetricNames(`sum by (hw_id, nvidia_gpu_index) (nvidia_gpu_allocation{hw_id=~"x", nvidia_gpu_index!=""}) * on (hw_id) group_left (nvidia_gpu_xid) label_replace(hw_status, "nvidia_x", "$1", "hw_id", "(.*)") / k8s_x:nvidia_gpu_y:max`)
	assert.Equal(t, []string{"nvidia_gpu_allocation", "hw_status"}, got)
	assert.Equal(t, []string{"hw_gpu_memory_limit_bytes"}, promMetricNames(`label_values(hw_gpu_memory_limit_bytes{host_name=~"$host"}, hw_id)`))
}

// Every receiver metric the shipped rules and the dashboard query has the name the exporter
// gives a metric metadata.yaml declares, or is one the contract promises and metadata.yaml
// does not declare yet. A unit changed in metadata.yaml (say nvidia.gpu.allocation's 1, which
// the exporter turns into _ratio) fails here rather than silently emptying a panel or an alert.
func TestRuleAndDashboardMetricsMatchReceiver(t *testing.T) {
	byProm, byOtel := receiverPromNames(t)
	raw, err := os.ReadFile("grafana/otelcol-gpumem.json")
	require.NoError(t, err)
	exprs := []string{}
	for _, m := range regexp.MustCompile(`"(?:expr|definition)": "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(raw), -1) {
		exprs = append(exprs, strings.ReplaceAll(m[1], `\"`, `"`))
	}
	for _, r := range loadRules(t) {
		exprs = append(exprs, r.Expr)
	}
	used := map[string]bool{}
	for _, e := range exprs {
		for _, n := range promMetricNames(e) {
			used[n] = true
		}
	}
	require.Contains(t, used, "nvidia_gpu_process_memory_usage_bytes")
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := byProm[n]; ok {
			continue
		}
		otel, promised := contractMetrics[n]
		if !promised {
			t.Errorf("%s: no metric of receiver/gpumemreceiver/metadata.yaml gets this name", n)
			continue
		}
		if got, declared := byOtel[otel]; declared {
			t.Errorf("%s: metadata.yaml declares %s, which Prometheus names %s: rename it in deploy/prometheus/alerts.yaml, the dashboard and the docs", n, otel, got)
			continue
		}
		t.Logf("pending: %s (%s) is not in metadata.yaml yet", n, otel)
	}
}

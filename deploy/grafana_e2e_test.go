//go:build e2e

package deploy_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// dashboard is what the test reads of deploy/grafana/otelcol-gpumem.json.
type dashboard struct {
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
			AllValue   string `json:"allValue"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Repeat  string  `json:"repeat"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr    string `json:"expr"`
		Instant bool   `json:"instant"`
	} `json:"targets"`
}

// dashQuery is one query the dashboard sends, with where it comes from.
type dashQuery struct {
	where   string // "panel <title>", "annotation <name>"
	expr    string
	instant bool
	perGPU  bool // in the row repeated for each GPU
	panel   string
}

func loadDashboard(t *testing.T) (dashboard, []dashQuery) {
	t.Helper()
	raw, err := os.ReadFile("grafana/otelcol-gpumem.json")
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	var qs []dashQuery
	perGPU := false
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				perGPU = p.Repeat == "gpu"
				walk(p.Panels)
				continue
			}
			require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			for _, tg := range p.Targets {
				qs = append(qs, dashQuery{where: "panel " + p.Title, expr: tg.Expr, instant: tg.Instant, perGPU: perGPU, panel: p.Title})
			}
		}
	}
	walk(d.Panels)
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			qs = append(qs, dashQuery{where: "annotation " + a.Name, expr: a.Expr, panel: "annotation " + a.Name})
		}
	}
	return d, qs
}

// pendingMetrics are dashboard metrics that other work adds to the receiver, by the
// OpenTelemetry name metadata.yaml will declare. A query on one may come back empty only
// while metadata.yaml does not declare it yet; once it does, the query must return data.
var pendingMetrics = map[string]string{
	"nvidia_gpu_memory_runway_seconds":                  "nvidia.gpu.memory.runway",
	"nvidia_gpu_process_memory_growth_bytes_per_second": "nvidia.gpu.process.memory.growth",
	"hw_status": "hw.status",
	// Kubernetes: the receiver's PodResources source and the simulator's pods.
	"nvidia_gpu_allocation":                   "nvidia.gpu.allocation",
	"nvidia_gpu_allocation_idle_time_seconds": "nvidia.gpu.allocation.idle_time",
	"nvidia_gpu_process_unexpected_count":     "nvidia.gpu.process.unexpected.count",
	// The workload recording rules read process series with pod names, which come with the
	// same work as the allocation metric.
	"k8s_workload_container:": "nvidia.gpu.allocation",
}

func declaredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("../receiver/gpumemreceiver/metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Metrics map[string]any `yaml:"metrics"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	out := map[string]bool{}
	for name := range md.Metrics {
		out[name] = true
	}
	return out
}

// labelValues turns a variable's label_values(selector, label) into a query with one
// series per value.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// TestGrafanaDashboard runs every query of the dashboard, with its variables substituted as
// Grafana substitutes them, against a real Prometheus scraping deploy/prometheus/collector.yaml
// on the built-in scenario, after the scenario's OOM (50 s): each must return data. Once with
// every variable at All (allValue .*), once with the per-GPU row at GPU 3, the leaking GPU.
func TestGrafanaDashboard(t *testing.T) {
	d, queries := loadDashboard(t)
	// The built-in scenario's leak lasts 50 s: forecast from 20 s of growth.
	p := startPrometheusStack(t, "GPUMEM_RUNWAY_WINDOW=1m", "GPUMEM_RUNWAY_MIN_DURATION=20s")
	// The classified OOM reaches Prometheus through the collector's own telemetry.
	p.waitQuery(t, 120*time.Second, `otelcol_processor_oom_classifier_ooms{host_name="gpu-node-1"}`, func(s []sample) bool { return len(s) > 0 })
	time.Sleep(3 * time.Second) // a few more scrapes after it
	from, to := p.started, time.Now()
	declared := declaredMetrics(t)

	const gpu3 = "GPU-a29e5a51-e267-3de8-f8a0-87fa47c0cac0"
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		assert.Equal(t, ".*", v.AllValue, "variable %s: All must match every value", v.Name)
		vars[v.Name] = v.AllValue
	}
	require.Contains(t, vars, "host")
	require.Contains(t, vars, "gpu")
	substitute := func(expr string, gpu string) string {
		r := strings.NewReplacer("$__rate_interval", "1m", "$host", "gpu-node-1", "$gpu", gpu)
		out := r.Replace(expr)
		require.NotContains(t, out, "$", "unsubstituted variable in %s", expr)
		return out
	}

	t.Run("variables", func(t *testing.T) {
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Definition)
			require.NotNil(t, m, "variable %s: %s", v.Name, v.Definition)
			s := p.query(t, "count by ("+m[2]+") ("+substitute(m[1], ".*")+")")
			assert.NotEmpty(t, s, "variable %s has no values", v.Name)
		}
		s := p.query(t, `count by (hw_id) (hw_gpu_memory_limit_bytes{host_name=~"gpu-node-1"})`)
		assert.Len(t, s, 12, "the GPU variable lists 8 GPUs and 4 MIG instances")
	})

	run := func(t *testing.T, q dashQuery, gpu string) bool {
		expr := substitute(q.expr, gpu)
		if q.instant {
			return len(p.query(t, expr)) > 0
		}
		return len(p.queryRange(t, expr, from, to)) > 0
	}
	pending := func(expr string) (string, bool) {
		for prom, otel := range pendingMetrics {
			if strings.Contains(expr, prom) && !declared[otel] {
				return otel, true
			}
		}
		return "", false
	}

	t.Run("every query at All", func(t *testing.T) {
		for _, q := range queries {
			if run(t, q, ".*") {
				continue
			}
			if otel, ok := pending(q.expr); ok {
				t.Logf("PENDING: %s: no data, %s is not in the receiver yet: %s", q.where, otel, q.expr)
				continue
			}
			t.Errorf("%s: no data: %s", q.where, q.expr)
		}
	})

	// On one GPU a panel shows data when one of its queries does (GPU 3 has no Xid).
	t.Run("every per-GPU panel at GPU 3", func(t *testing.T) {
		got := map[string]bool{}
		var order []string
		for _, q := range queries {
			if !q.perGPU {
				continue
			}
			if _, seen := got[q.panel]; !seen {
				order = append(order, q.panel)
				got[q.panel] = false
			}
			if run(t, q, gpu3) {
				got[q.panel] = true
			} else if otel, ok := pending(q.expr); ok {
				t.Logf("PENDING: %s at GPU 3: no data, %s is not in the receiver yet", q.where, otel)
			}
		}
		require.NotEmpty(t, order, "the dashboard has a per-GPU row")
		for _, name := range order {
			if !got[name] && !allPending(queries, name, pending) {
				t.Errorf("panel %s: no data for GPU 3", name)
			}
		}
	})
}

// allPending reports whether every query of the panel is on a pending metric.
func allPending(qs []dashQuery, panel string, pending func(string) (string, bool)) bool {
	for _, q := range qs {
		if q.panel != panel {
			continue
		}
		if _, ok := pending(q.expr); !ok {
			return false
		}
	}
	return true
}

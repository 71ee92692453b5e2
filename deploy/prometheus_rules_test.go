package deploy_test

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
)

// alertRule is one rule of deploy/prometheus/alerts.yaml: an alert or a recording rule.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
	Group       string            `yaml:"-"` // the rule's group
}

type ruleGroup struct {
	Name  string      `yaml:"name"`
	Rules []alertRule `yaml:"rules"`
}

func loadRuleGroups(t *testing.T) []ruleGroup {
	t.Helper()
	var f struct {
		Groups []ruleGroup `yaml:"groups"`
	}
	data, err := os.ReadFile("prometheus/alerts.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &f))
	require.NotEmpty(t, f.Groups)
	return f.Groups
}

// loadRules is every rule of every group, alerts and recording rules.
func loadRules(t *testing.T) []alertRule {
	t.Helper()
	var out []alertRule
	for _, g := range loadRuleGroups(t) {
		for _, r := range g.Rules {
			r.Group = g.Name
			out = append(out, r)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// loadAlertRules is the alerts alone.
func loadAlertRules(t *testing.T) []alertRule {
	t.Helper()
	var out []alertRule
	for _, r := range loadRules(t) {
		if r.Alert != "" {
			out = append(out, r)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// Every alert says what, where and how bad, is a page, a warning or info, and links to a
// runbook section that exists in docs/runbooks.md. Where is the host and, for the GPUs'
// alerts, either the GPU or, for the per-workload alert (a pod's memory over all its GPUs),
// the pod; the collectors' own alerts (otelcol-gpumem-delivery) name the host alone.
func TestAlertRulesAreComplete(t *testing.T) {
	runbooks, err := os.ReadFile("../docs/runbooks.md")
	require.NoError(t, err)
	anchors := markdownAnchors(string(runbooks))
	for _, r := range loadAlertRules(t) {
		assert.Contains(t, []string{"page", "warning", "info"}, r.Labels["severity"], "%s: severity", r.Alert)
		for _, k := range []string{"summary", "description"} {
			a := r.Annotations[k]
			if r.Group != "otelcol-gpumem-delivery" && r.Group != "otelcol-gpumem-classifier" { // the GPUs' alerts; these two groups: the collectors'
				names := strings.Contains(a, "$labels.nvidia_gpu_index") ||
					strings.Contains(a, "$labels.k8s_pod_name") && strings.Contains(a, "$labels.k8s_namespace_name")
				assert.True(t, names, "%s: %s names the GPU (nvidia_gpu_index) or the pod (namespace and name)", r.Alert, k)
			}
			assert.Contains(t, a, "$labels.host_name", "%s: %s names the host", r.Alert, k)
		}
		assert.Contains(t, r.Annotations["summary"]+r.Annotations["description"], "$value", "%s: the value", r.Alert)
		url := r.Annotations["runbook_url"]
		prefix := "https://github.com/gpumem/otelcol-gpumem/blob/main/docs/runbooks.md#"
		if assert.True(t, strings.HasPrefix(url, prefix), "%s: runbook_url %q", r.Alert, url) {
			assert.True(t, anchors[strings.TrimPrefix(url, prefix)], "%s: docs/runbooks.md has no section #%s", r.Alert, strings.TrimPrefix(url, prefix))
		}
	}
}

// Every alert has a promtool case where it fires and one where it stays quiet.
func TestEveryAlertIsUnitTested(t *testing.T) {
	var f struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	data, err := os.ReadFile("prometheus/alerts_test.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &f))
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range f.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for _, r := range loadAlertRules(t) {
		assert.True(t, fires[r.Alert], "%s: no promtool case where it fires", r.Alert)
		assert.True(t, quiet[r.Alert], "%s: no promtool case where it stays quiet", r.Alert)
	}
}

// GPUXidFault's code list is the Xid catalog's fault codes less 79 (GPULost's).
func TestXidFaultAlertMatchesCatalog(t *testing.T) {
	var expr string
	for _, r := range loadAlertRules(t) {
		if r.Alert == "GPUXidFault" {
			expr = r.Expr
		}
	}
	lists := regexp.MustCompile(`nvidia_gpu_xid=~"([0-9|]+)"`).FindAllStringSubmatch(expr, -1)
	require.NotEmpty(t, lists, "GPUXidFault selects codes with nvidia_gpu_xid=~\"...\"")
	for _, l := range lists[1:] {
		assert.Equal(t, lists[0][1], l[1], "every selector of GPUXidFault has the same codes")
	}
	m := lists[0]
	var got []int
	for _, s := range strings.Split(m[1], "|") {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		got = append(got, n)
	}
	var want []int
	for c := 0; c < 1024; c++ {
		if xid.Lookup(c).Fault && c != 79 {
			want = append(want, c)
		}
	}
	slices.Sort(got)
	assert.Equal(t, want, got)
}

// markdownAnchors is GitHub's anchor for each heading: lower case, punctuation dropped,
// spaces to hyphens.
func markdownAnchors(md string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

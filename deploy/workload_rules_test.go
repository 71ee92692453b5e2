package deploy_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/k8sname"
)

// The rules derive the workload from the pod name with exactly the regexp the receiver and the
// processor use (k8sname.PromQLWorkloadRegexp, whose own test checks it against
// k8sname.Workload), so a pod belongs to the same workload in an alert and in an OOM's evidence.
func TestWorkloadRegexpMatchesK8sname(t *testing.T) {
	var n int
	for _, r := range loadRules(t) {
		for _, args := range promCalls(t, r.Expr, "label_replace") {
			require.Len(t, args, 5, "%s%s: label_replace takes 5 arguments", r.Record, r.Alert)
			var lit []string
			for _, a := range args[1:] {
				s, err := strconv.Unquote(strings.TrimSpace(a))
				require.NoError(t, err, "%s%s: label_replace argument %s is a string literal", r.Record, r.Alert, a)
				lit = append(lit, s)
			}
			dst, repl, src, re := lit[0], lit[1], lit[2], lit[3]
			if dst != "k8s_workload_name" {
				continue
			}
			n++
			assert.Equal(t, "k8s_pod_name", src, "%s: the workload comes from the pod name", r.Record)
			assert.Equal(t, "$1$2$3", repl, "%s: replacement", r.Record)
			assert.Equal(t, k8sname.PromQLWorkloadRegexp, re, "%s: the regexp must be k8sname.PromQLWorkloadRegexp, verbatim", r.Record)
		}
	}
	assert.Positive(t, n, "no rule derives k8s_workload_name with label_replace")
}

// The recording rules are named level:metric:operations, every recorded series a rule reads is
// recorded by some rule, and each is documented in docs/metrics.md.
func TestRecordingRules(t *testing.T) {
	doc, err := os.ReadFile("../docs/metrics.md")
	require.NoError(t, err)
	recorded := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.Record == "" {
			continue
		}
		recorded[r.Record] = true
		assert.Regexp(t, `^[a-z0-9_]+:[a-z0-9_]+:[a-z0-9_]+$`, r.Record, "level:metric:operations")
		assert.True(t, strings.Contains(string(doc), "`"+r.Record+"`"), "%s: not in docs/metrics.md", r.Record)
	}
	require.NotEmpty(t, recorded)
	used := regexp.MustCompile(`[a-z0-9_]+:[a-z0-9_]+:[a-z0-9_]+`)
	for _, r := range loadRules(t) {
		for _, name := range used.FindAllString(r.Expr, -1) {
			assert.True(t, recorded[name], "%s%s reads %s, which no rule records", r.Record, r.Alert, name)
		}
	}
}

// promCalls returns the top-level-comma-separated arguments of every call of fn in a PromQL
// expression (string literals and nested parentheses respected).
func promCalls(t *testing.T, expr, fn string) [][]string {
	t.Helper()
	var out [][]string
	for i := 0; ; {
		j := strings.Index(expr[i:], fn+"(")
		if j < 0 {
			return out
		}
		start := i + j + len(fn) + 1
		args, end, ok := splitArgs(expr, start)
		require.True(t, ok, "unbalanced %s( in %s", fn, expr)
		out = append(out, args)
		i = end
	}
}

// splitArgs reads from just after an opening parenthesis to its match; it returns the
// arguments and the index after the closing parenthesis.
func splitArgs(s string, i int) ([]string, int, bool) {
	var args []string
	depth, from := 0, i
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'', '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' && c != '`' {
					i++
				}
			}
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			if depth == 0 {
				return append(args, s[from:i]), i + 1, c == ')'
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, s[from:i])
				from = i + 1
			}
		}
	}
	return nil, i, false
}

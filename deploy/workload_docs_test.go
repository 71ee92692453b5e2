package deploy_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The per-workload alert's margin is the one docs/kubernetes.md tells users how to change.
func TestWorkloadMarginDocumented(t *testing.T) {
	var expr string
	for _, r := range loadAlertRules(t) {
		if r.Alert == "GPUMemoryAboveWorkloadPeak" {
			expr = r.Expr
		}
	}
	require.NotEmpty(t, expr, "GPUMemoryAboveWorkloadPeak")
	m := regexp.MustCompile(`\)\s*>\s*([0-9.]+)`).FindStringSubmatch(expr)
	require.NotNil(t, m, "the alert compares the ratio with a margin: (...) > 1.2")
	doc, err := os.ReadFile("../docs/kubernetes.md")
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(doc), "`> "+m[1]+"`"), "docs/kubernetes.md names the shipped margin `> %s`", m[1])
}

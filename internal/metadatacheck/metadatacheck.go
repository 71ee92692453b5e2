// Package metadatacheck keeps a component's hand-kept metadata.yaml and README status table in
// step with its code: mdatagen, which would generate both, is not served by the module proxy.
package metadatacheck

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.yaml.in/yaml/v3"
)

// Extension checks the extension in the current directory (a test's package directory):
// metadata.yaml's type, class and stability are the code's, README.md's status table shows
// the stability, and README.md's configuration example uses the type.
func Extension(t *testing.T, typ component.Type, stability component.StabilityLevel) {
	t.Helper()
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Type   string `yaml:"type"`
		Status struct {
			Class     string              `yaml:"class"`
			Stability map[string][]string `yaml:"stability"`
		} `yaml:"status"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	assert.Equal(t, typ.String(), md.Type)
	assert.Equal(t, "extension", md.Status.Class)
	level := strings.ToLower(stability.String())
	assert.Equal(t, map[string][]string{level: {"extension"}}, md.Status.Stability)

	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "| Stability | "+level+" |")
	assert.Contains(t, string(readme), "  "+typ.String()+":\n", "README's example uses the type")
}

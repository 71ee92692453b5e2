//go:build e2e

package deploy_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The node config shipped for a systemd service outside Kubernetes validates against the built
// binary, with the environment its unit's EnvironmentFile gives it.
func TestSystemdNodeConfigValidates(t *testing.T) {
	raw, err := os.ReadFile("systemd/otelcol-gpumem.yaml")
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
	env := []string{"PATH=" + os.Getenv("PATH"), "OTELCOL_GPUMEM_ENDPOINT=collector.example:4317"}
	out, err := validate(t, cfg, env)
	require.NoError(t, err, "validate systemd/otelcol-gpumem.yaml:\n%s", out)
}

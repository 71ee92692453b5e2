package deploy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The systemd unit starts the collector on the node config shipped beside it, installed where
// docs/slurm.md puts it, and that config reads the host's own proc tree and has no Kubernetes
// section (a Slurm node has no kubelet to ask).
func TestSystemdUnitAndNodeConfig(t *testing.T) {
	unit, err := os.ReadFile("systemd/otelcol-gpumem.service")
	require.NoError(t, err)
	assert.Contains(t, string(unit), "ExecStart=/usr/local/bin/otelcol-gpumem --config /etc/otelcol-gpumem/otelcol-gpumem.yaml\n")
	assert.Contains(t, string(unit), "EnvironmentFile=/etc/otelcol-gpumem/env\n")

	raw, err := os.ReadFile("systemd/otelcol-gpumem.yaml")
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
	gpu := mapAt(cfg, "receivers", "gpu_mem")
	require.NotNil(t, gpu)
	assert.Equal(t, "/proc", str(gpu, "processes", "proc_root"))
	assert.Nil(t, gpu["kubernetes"], "no kubernetes section on a Slurm node")
	assert.True(t, strings.Contains(string(raw), "${env:OTELCOL_GPUMEM_ENDPOINT}"), "the endpoint comes from the unit's EnvironmentFile")

	doc, err := os.ReadFile("../docs/slurm.md")
	require.NoError(t, err)
	for _, p := range []string{"deploy/systemd/otelcol-gpumem.service", "deploy/systemd/otelcol-gpumem.yaml", "/etc/otelcol-gpumem/env", "OTELCOL_GPUMEM_ENDPOINT"} {
		assert.Contains(t, string(doc), p, "docs/slurm.md explains the install")
	}
}

//go:build e2e

package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// podEnv is the environment the pod gives the collector: literal values as written, and a
// plausible stand-in for each downward-API value.
func podEnv(p pod) []string {
	fake := map[string]string{
		"status.podIP":       "10.0.0.7",
		"spec.nodeName":      "gpu-node-1",
		"metadata.namespace": namespace,
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range maps(listAt(p.container, "env")) {
		v := str(e, "value")
		if ref := str(e, "valueFrom", "fieldRef", "fieldPath"); ref != "" {
			v = fake[ref]
		}
		if e["name"] == "MY_POD_IP" && v == "" { // the chart's own MY_POD_IP
			v = fake["status.podIP"]
		}
		env = append(env, str(e, "name")+"="+v)
	}
	return env
}

// validate runs `otelcol-gpumem validate` on cfg with env and the feature gates among args,
// and returns its output and error.
func validate(t *testing.T, cfg map[string]any, env []string, args ...string) (string, error) {
	t.Helper()
	text, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, text, 0o600))
	cmdArgs := []string{"validate", "--config", path}
	for _, a := range args {
		if strings.HasPrefix(a, "--feature-gates=") {
			cmdArgs = append(cmdArgs, a)
		}
	}
	cmd := exec.Command(e2eharness.Binary(t), cmdArgs...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Every collector configuration shipped under deploy/ (each ConfigMap the workloads mount, and
// the Helm values' config with the nulls Helm removes) validates against the built binary,
// with the env vars its pod sets.
func TestConfigsValidate(t *testing.T) {
	for _, p := range allPods(t) {
		t.Run(strings.ReplaceAll(p.source, "/", "_"), func(t *testing.T) {
			out, err := validate(t, p.config, podEnv(p), strs(p.container, "args")...)
			require.NoError(t, err, "validate %s:\n%s", p.source, out)
		})
	}
}

// The same check rejects a configuration the receiver refuses, so a pass above means the
// binary looked at our components' settings.
func TestValidateRejectsBadConfig(t *testing.T) {
	p := agentPods(t)[0]
	cfg := parseConfig(t, mustYAML(t, p.config))
	mapAt(cfg, "receivers", "gpu_mem")["backend"] = "cuda"
	out, err := validate(t, cfg, podEnv(p), strs(p.container, "args")...)
	require.Error(t, err)
	require.Contains(t, out, "'backend' must be")
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

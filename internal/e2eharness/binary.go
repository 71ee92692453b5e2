package e2eharness

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Binary is the distribution under test: OTELCOL_GPUMEM_BIN, else bin/otelcol-gpumem at the
// root of the repository the test runs in (found by walking up to go.mod), so a test's
// package directory does not decide where the binary is looked for.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_GPUMEM_BIN")
	if bin == "" {
		root, err := repoRoot()
		require.NoError(t, err, "find the repository root")
		bin = filepath.Join(root, "bin", "otelcol-gpumem")
	}
	abs, err := filepath.Abs(bin)
	require.NoError(t, err)
	_, err = os.Stat(abs)
	require.NoError(t, err, "build the distribution first: make build")
	return abs
}

// repoRoot is the nearest directory above the working directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

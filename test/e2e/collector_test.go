//go:build e2e

// Package e2e runs the built otelcol-gpumem distribution (OTELCOL_GPUMEM_BIN, built by
// `make build`) as a user would: a YAML config, a real collector process, the file exporter.
package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// collector is a running distribution process and the directory its config was written
// to ({{DIR}}).
type collector struct {
	*e2eharness.Process
	dir string
	// reported: the exit error was already reported, so a second stop (the cleanup after
	// an explicit stop) stays quiet.
	reported bool
}

// startCollector writes config (with {{DIR}} replaced by a fresh temp dir) and runs the
// binary with it and args.
func startCollector(t *testing.T, config string, args ...string) *collector {
	t.Helper()
	return startWrapped(t, nil, config, args...)
}

// startWrapped is startCollector with the binary run by wrap (a command and its arguments,
// such as unshare's), which must exec it with the arguments that follow.
func startWrapped(t *testing.T, wrap []string, config string, args ...string) *collector {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(strings.ReplaceAll(config, "{{DIR}}", dir)), 0o600))
	argv := append(append(append([]string{}, wrap...), e2eharness.Binary(t), "--config", cfgPath), args...)
	c := &collector{Process: e2eharness.Start(t, "collector", nil, argv...), dir: dir}
	t.Cleanup(func() { c.stop(t) })
	return c
}

// stop interrupts the collector and waits for its clean exit.
func (c *collector) stop(t *testing.T) {
	t.Helper()
	killed, err := c.StopWithin(syscall.SIGINT, 20*time.Second)
	if killed {
		t.Errorf("collector did not stop within 20s\n%s", c.Output())
		return
	}
	if err != nil && !c.reported {
		c.reported = true
		t.Errorf("collector exited with %v\n%s", err, c.Output())
	}
}

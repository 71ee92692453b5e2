//go:build e2e

// Package e2e runs the built otelcol-gpumem distribution (OTELCOL_GPUMEM_BIN, built by
// `make build`) as a user would: a YAML config, a real collector process, the file exporter.
package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// collector is a running distribution process.
type collector struct {
	cmd *exec.Cmd
	out *bytes.Buffer
	dir string
}

func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_GPUMEM_BIN")
	if bin == "" {
		bin = "../../bin/otelcol-gpumem"
	}
	abs, err := filepath.Abs(bin)
	require.NoError(t, err)
	_, err = os.Stat(abs)
	require.NoError(t, err, "build the distribution first: make build")
	return abs
}

// startCollector writes config (with {{DIR}} replaced by a fresh temp dir) and runs the binary.
func startCollector(t *testing.T, config string) *collector {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(strings.ReplaceAll(config, "{{DIR}}", dir)), 0o600))
	c := &collector{cmd: exec.Command(binary(t), "--config", cfgPath), out: &bytes.Buffer{}, dir: dir}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	require.NoError(t, c.cmd.Start())
	t.Cleanup(func() { c.stop(t) })
	return c
}

// stop interrupts the collector and waits for its clean exit.
func (c *collector) stop(t *testing.T) {
	t.Helper()
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("collector exited with %v\n%s", err, c.out.String())
		}
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		t.Errorf("collector did not stop within 20s\n%s", c.out.String())
	}
}

// readMetrics parses a file exporter JSON-lines file.
func readMetrics(t *testing.T, path string) []pmetric.Metrics {
	t.Helper()
	var out []pmetric.Metrics
	forLines(t, path, func(line []byte) {
		md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(line)
		require.NoError(t, err)
		out = append(out, md)
	})
	return out
}

// readLogs parses a file exporter JSON-lines file.
func readLogs(t *testing.T, path string) []plog.Logs {
	t.Helper()
	var out []plog.Logs
	forLines(t, path, func(line []byte) {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
		require.NoError(t, err)
		out = append(out, ld)
	})
	return out
}

func forLines(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			fn(sc.Bytes())
		}
	}
	require.NoError(t, sc.Err())
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, c *collector, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		if c.cmd.ProcessState != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s\ncollector output:\n%s", what, c.out.String())
}

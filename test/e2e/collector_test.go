//go:build e2e

// Package e2e runs the built otelcol-gpumem distribution (OTELCOL_GPUMEM_BIN, built by
// `make build`) as a user would: a YAML config, a real collector process, the file exporter.
package e2e

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// collector is a running distribution process.
type collector struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	dir  string
	done chan struct{} // closed when the process has exited; err holds Wait's answer
	err  error
	// reported: the exit error was already reported, so a second stop (the cleanup after
	// an explicit stop) stays quiet.
	reported bool
}

// syncBuffer is the collector's stdout and stderr: exec's copying goroutine writes while a
// test may read it (a failure message, a readiness check).
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// exited reports whether the process has ended.
func (c *collector) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
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
	argv := append(append(append([]string{}, wrap...), binary(t), "--config", cfgPath), args...)
	c := &collector{cmd: exec.Command(argv[0], argv[1:]...), out: &syncBuffer{}, dir: dir, done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	require.NoError(t, c.cmd.Start())
	// One goroutine waits, so that waitFor notices a collector that exits early (a config
	// error) instead of polling until its timeout.
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() { c.stop(t) })
	return c
}

// stop interrupts the collector and waits for its clean exit.
func (c *collector) stop(t *testing.T) {
	t.Helper()
	if !c.exited() {
		_ = c.cmd.Process.Signal(syscall.SIGINT)
	}
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
		t.Errorf("collector did not stop within 20s\n%s", c.out.String())
		return
	}
	if c.err != nil && !c.reported {
		c.reported = true
		t.Errorf("collector exited with %v\n%s", c.err, c.out.String())
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

// forLines calls fn with each complete line of a JSON-lines file. A missing file has no
// lines, and a last line without its newline is left out: the exporter may be half way
// through writing it while a test polls.
func forLines(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	require.NoError(t, err)
	if k := bytes.LastIndexByte(data, '\n'); k >= 0 {
		data = data[:k+1]
	} else {
		data = nil
	}
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			fn(line)
		}
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, c *collector, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		if c.exited() {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s\ncollector output:\n%s", what, c.out.String())
}

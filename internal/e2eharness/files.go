package e2eharness

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// ReadMetrics parses a file exporter's JSON-lines file.
func ReadMetrics(t testing.TB, path string) []pmetric.Metrics {
	t.Helper()
	var out []pmetric.Metrics
	ForLines(t, path, func(line []byte) {
		md, err := (&pmetric.JSONUnmarshaler{}).UnmarshalMetrics(line)
		require.NoError(t, err)
		out = append(out, md)
	})
	return out
}

// ReadLogs parses a file exporter's JSON-lines file.
func ReadLogs(t testing.TB, path string) []plog.Logs {
	t.Helper()
	var out []plog.Logs
	ForLines(t, path, func(line []byte) {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
		require.NoError(t, err)
		out = append(out, ld)
	})
	return out
}

// ForLines calls fn with each complete line of a JSON-lines file. A missing file has no
// lines, and a last line without its newline is left out: the exporter may be half way
// through writing it while a test polls.
func ForLines(t testing.TB, path string, fn func([]byte)) {
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

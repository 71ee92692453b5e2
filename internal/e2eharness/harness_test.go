package e2eharness

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestProcessStopsRestartsAndKeepsOutput(t *testing.T) {
	p := NewProcess(t, "sleeper", nil, "sh", "-c", `echo run; trap 'echo bye; exit 0' TERM; while :; do sleep 0.05; done`)
	assert.True(t, p.Exited(), "not started yet")
	p.Start()
	WaitFor(t, 5*time.Second, p, "first output", func() bool { return p.Output() == "run\n" })
	require.NotZero(t, p.Pid())
	killed, err := p.Stop(syscall.SIGTERM)
	assert.False(t, killed)
	assert.NoError(t, err)
	assert.True(t, p.Exited())
	assert.Zero(t, p.Pid())

	assert.Equal(t, []string{"-c", p.Args()[1]}, p.Args())
	p.Start() // a restart: the same recipe, the same output
	WaitFor(t, 5*time.Second, p, "second run", func() bool { return p.Output() == "run\nbye\nrun\n" })
	p.Kill()
	assert.Error(t, p.Err(), "a SIGKILLed run exits with an error")
}

func TestStopKillsAProcessThatIgnoresTheSignal(t *testing.T) {
	p := Start(t, "stubborn", nil, "sh", "-c", `trap '' TERM; echo ready; while :; do sleep 0.05; done`)
	WaitFor(t, 5*time.Second, p, "trap set", func() bool { return p.Output() == "ready\n" })
	killed, err := p.StopWithin(syscall.SIGTERM, 200*time.Millisecond)
	assert.True(t, killed)
	assert.Error(t, err)
}

func TestExitedNoticesAnEarlyExit(t *testing.T) {
	p := Start(t, "failing", nil, "sh", "-c", "exit 3")
	<-p.Done()
	assert.True(t, p.Exited())
	assert.EqualError(t, p.Err(), "exit status 3")
	killed, err := p.Stop(syscall.SIGTERM)
	assert.False(t, killed)
	assert.EqualError(t, err, "exit status 3")
}

func TestForLinesSkipsAHalfWrittenLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	var got []string
	ForLines(t, path, func(b []byte) { got = append(got, string(b)) })
	assert.Empty(t, got, "a missing file has no lines")

	require.NoError(t, os.WriteFile(path, []byte("{\"a\":1}\n\n{\"b\":2}\n{\"c\""), 0o600))
	ForLines(t, path, func(b []byte) { got = append(got, string(b)) })
	assert.Equal(t, []string{`{"a":1}`, `{"b":2}`}, got)
}

func TestReadLogsParsesTheFileExporter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs.jsonl")
	line := `{"resourceLogs":[{"resource":{},"scopeLogs":[{"scope":{},"logRecords":[{"body":{"stringValue":"hello"}}]}]}]}`
	require.NoError(t, os.WriteFile(path, []byte(line+"\n"), 0o600))
	logs := ReadLogs(t, path)
	require.Len(t, logs, 1)
	assert.Equal(t, []string(nil), (&Process{}).Args())
	assert.Equal(t, "hello", logs[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str())
	assert.Empty(t, ReadMetrics(t, filepath.Join(t.TempDir(), "none.jsonl")))
}

func TestBinaryIsFoundFromAnyPackageDirectory(t *testing.T) {
	root, err := repoRoot()
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(root, "go.mod"))
	assert.Equal(t, root, filepath.Dir(filepath.Dir(mustAbs(t, "."))), "internal/e2eharness is two levels below the root")

	fake := filepath.Join(t.TempDir(), "otelcol")
	require.NoError(t, os.WriteFile(fake, nil, 0o700))
	t.Setenv("OTELCOL_GPUMEM_BIN", fake)
	assert.Equal(t, fake, Binary(t))
}

func TestFreeAddrsAreDistinct(t *testing.T) {
	addrs := FreeAddrs(t, 8)
	seen := map[string]bool{}
	for _, a := range addrs {
		assert.False(t, seen[a], a)
		seen[a] = true
	}
	assert.NotZero(t, FreePort(t))
}

func mustAbs(t *testing.T, p string) string {
	abs, err := filepath.Abs(p)
	require.NoError(t, err)
	return abs
}

package podresources

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
)

// clock is a hand-driven Options.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// socketPath is short: unix socket paths are limited to 108 bytes and
// t.TempDir() under a long test name can exceed that.
func socketPath(t *testing.T) string { return socketPathB(t) }

func socketPathB(t testing.TB) string {
	dir, err := os.MkdirTemp("", "pr")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "kubelet.sock")
}

type harness struct {
	src  *Source
	clk  *clock
	logs *observer.ObservedLogs
	kub  *simkubelet.Server
	path string
}

func newHarness(t *testing.T, opts simkubelet.Options, podsDir string) *harness {
	core, logs := observer.New(zapcore.InfoLevel)
	h := &harness{clk: &clock{t: time.Unix(1700000000, 0)}, logs: logs, kub: simkubelet.New(opts), path: socketPath(t)}
	h.src = NewSource(Options{SocketPath: h.path, PodLogsDir: podsDir, Logger: zap.New(core), Now: h.clk.now, CallTimeout: 5 * time.Second})
	t.Cleanup(func() {
		require.NoError(t, h.src.Shutdown(context.Background()))
		h.kub.Stop()
	})
	return h
}

func (h *harness) tick(t *testing.T) {
	h.clk.advance(DefaultRefreshInterval)
	h.src.Refresh(context.Background())
}

func (h *harness) messages(level zapcore.Level) []string {
	var out []string
	for _, e := range h.logs.FilterLevelExact(level).All() {
		out = append(out, e.Message)
	}
	return out
}

var trainPods = []simkubelet.Pod{
	{Namespace: "ml", Name: "train-0", Containers: []simkubelet.Container{
		{Name: "main", Devices: []simkubelet.Devices{{Resource: "nvidia.com/gpu", IDs: []string{gpuA}}}},
		{Name: "sidecar"},
	}},
	{Namespace: "dev", Name: "nb", Containers: []simkubelet.Container{
		{Name: "jupyter", Devices: []simkubelet.Devices{{Resource: "nvidia.com/gpu.shared", IDs: []string{gpuC + "::1"}}}},
	}},
}

func TestSourceListsOnRefreshIntervalOnly(t *testing.T) {
	h := newHarness(t, simkubelet.Options{}, "")
	h.kub.SetPods(trainPods)
	require.NoError(t, h.kub.Start(h.path))
	require.NoError(t, h.src.Start(context.Background()))
	assert.Equal(t, "train-0", h.src.Snapshot().Device(gpuA)[0].Pod)
	assert.Equal(t, "nb", h.src.Snapshot().Device(gpuC)[0].Pod)
	_, known := h.src.Snapshot().Allocatable()
	assert.True(t, known)

	for range 20 { // 20 scrapes within one interval: no List
		h.clk.advance(DefaultRefreshInterval / 40)
		h.src.Refresh(context.Background())
	}
	assert.Equal(t, 1, h.kub.ListCalls())
	h.kub.SetPods(trainPods[:1])
	h.tick(t)
	assert.Equal(t, 2, h.kub.ListCalls())
	assert.Empty(t, h.src.Snapshot().Device(gpuC))
	assert.Equal(t, []string{"Kubernetes pod allocations on"}, h.messages(zapcore.InfoLevel))
}

func TestSourceSocketAbsentThenAppears(t *testing.T) {
	h := newHarness(t, simkubelet.Options{}, "")
	require.NoError(t, h.src.Start(context.Background()), "an absent socket is no error")
	h.tick(t)
	h.tick(t)
	assert.Empty(t, h.src.Snapshot().Allocations())
	assert.Len(t, h.messages(zapcore.InfoLevel), 1, "one INFO while absent, not one per tick")

	h.kub.SetPods(trainPods)
	require.NoError(t, h.kub.Start(h.path))
	h.tick(t)
	assert.Len(t, h.src.Snapshot().Allocations(), 2)
	assert.Equal(t, "Kubernetes pod allocations on: the PodResources socket appeared", h.messages(zapcore.InfoLevel)[1])
	assert.Empty(t, h.messages(zapcore.WarnLevel))
}

func TestSourceListFailsThenRecovers(t *testing.T) {
	h := newHarness(t, simkubelet.Options{}, "")
	h.kub.SetPods(trainPods)
	require.NoError(t, h.kub.Start(h.path))
	require.NoError(t, h.src.Start(context.Background()))

	h.kub.FailList(errors.New("kubelet is restarting"))
	for range 5 {
		h.tick(t)
	}
	assert.Len(t, h.messages(zapcore.WarnLevel), 1, "one WARN per episode")
	assert.Len(t, h.src.Snapshot().Allocations(), 2, "the last good answer stays")

	h.kub.FailList(errors.New("another reason"))
	h.tick(t)
	h.kub.FailList(errors.New("yet another"))
	h.tick(t)
	assert.Len(t, h.messages(zapcore.WarnLevel), 1, "one WARN per episode, whatever the errors in it")

	h.kub.FailList(nil)
	h.kub.SetPods(trainPods[:1])
	h.tick(t)
	h.tick(t)
	assert.Len(t, h.src.Snapshot().Allocations(), 1)
	info := h.messages(zapcore.InfoLevel)
	assert.Equal(t, []string{"Kubernetes pod allocations on", "Kubernetes pod allocations recovered: PodResources List answers again"}, info)
	assert.Len(t, h.messages(zapcore.WarnLevel), 1)
}

func TestSourceOldKubeletWithoutAllocatable(t *testing.T) {
	h := newHarness(t, simkubelet.Options{NoAllocatable: true}, "")
	h.kub.SetPods(trainPods)
	require.NoError(t, h.kub.Start(h.path))
	require.NoError(t, h.src.Start(context.Background()))
	h.tick(t)
	h.tick(t)
	_, known := h.src.Snapshot().Allocatable()
	assert.False(t, known)
	assert.Len(t, h.src.Snapshot().Allocations(), 2)
	assert.Len(t, h.logs.FilterMessageSnippet("no GetAllocatableResources").All(), 1, "said once, then never asked again")
	assert.Empty(t, h.messages(zapcore.WarnLevel))
}

func TestSourceOffAndShutdown(t *testing.T) {
	require.NoError(t, NewSource(Options{}).Shutdown(context.Background()), "Shutdown without Start")

	core, logs := observer.New(zapcore.InfoLevel)
	s := NewSource(Options{Logger: zap.New(core)})
	require.NoError(t, s.Start(context.Background()))
	s.Refresh(context.Background())
	assert.Equal(t, 1, logs.Len())
	assert.Equal(t, Identity{}, s.Lookup(uidTrain, cidTrain, gpuA))
	require.NoError(t, s.Shutdown(context.Background()))
	require.NoError(t, s.Shutdown(context.Background()))

	// No refresh (and no connection) after Shutdown.
	h := newHarness(t, simkubelet.Options{}, "")
	require.NoError(t, h.kub.Start(h.path))
	require.NoError(t, h.src.Shutdown(context.Background()))
	h.tick(t)
	assert.Zero(t, h.kub.ListCalls())
}

// A kubelet restart removes and recreates the socket; the connection must
// find it again by itself (gRPC reconnects, its backoff capped by the
// refresh interval).
func TestSourceKubeletRestart(t *testing.T) {
	h := newHarness(t, simkubelet.Options{}, "")
	h.kub.SetPods(trainPods)
	require.NoError(t, h.kub.Start(h.path))
	require.NoError(t, h.src.Start(context.Background()))
	h.kub.Stop()
	h.tick(t)
	assert.Len(t, h.messages(zapcore.WarnLevel), 1)
	require.NoError(t, h.kub.Start(h.path))
	require.Eventually(t, func() bool {
		h.tick(t)
		return len(h.messages(zapcore.InfoLevel)) == 2
	}, 10*time.Second, 50*time.Millisecond)
	assert.Len(t, h.src.Snapshot().Allocations(), 2)
}

func TestSourceLogDirStateLoggedOnce(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	clk := &clock{t: time.Unix(0, 0)}
	podsDir := filepath.Join(t.TempDir(), "pods")
	s := NewSource(Options{PodLogsDir: podsDir, Logger: zap.New(core), Now: clk.now})
	require.NoError(t, s.Start(context.Background()))
	for range 3 {
		clk.advance(DefaultRefreshInterval)
		s.Refresh(context.Background())
	}
	require.NoError(t, os.Mkdir(podsDir, 0o755))
	fakePod(t, podsDir, "ml_train-0_"+uidTrain)
	for range 3 {
		clk.advance(DefaultRefreshInterval)
		s.Refresh(context.Background())
	}
	assert.Equal(t, 3, logs.Len(), "pods off (socket), log dirs off, log dirs on")
	assert.Len(t, logs.FilterMessageSnippet("log directories off").All(), 1)
	assert.Len(t, logs.FilterMessageSnippet("log directories on").All(), 1)
	assert.Equal(t, Identity{Namespace: "ml", Pod: "train-0"}, s.Lookup(uidTrain, "", ""))
	require.NoError(t, s.Shutdown(context.Background()))
}

// Lookups run while a refresh swaps the indexes (run with -race).
func TestSourceConcurrentLookup(t *testing.T) {
	h := lookupNode(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2000 {
			h.src.Lookup(uidTrain, cidTrain, gpuA)
			h.src.Snapshot().Device(gpuA)
		}
	}()
	for range 20 {
		h.tick(t)
	}
	<-done
}

package gpumemreceiver

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/node"
)

// promptly runs fn and fails the test if it takes longer than a few seconds; unblock is
// called then, so a goroutine stuck in open(2) on a FIFO can end.
func promptly(t *testing.T, what string, fn func() error, unblock func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		unblock()
		<-done
		t.Fatalf("%s blocked on a FIFO nobody reads or writes", what)
		return nil
	}
}

// openOther opens the FIFO's other end for a moment, which releases an open(2) blocked
// waiting for it.
func openOther(path string, flag int) func() {
	return func() {
		if f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, 0); err == nil {
			time.Sleep(100 * time.Millisecond)
			_ = f.Close()
		}
	}
}

// Start never blocks on a file: the simulated backend writes its kernel records to
// xid.kmsg_path, and a FIFO there with no reader yet must neither hang Start nor Shutdown.
func TestStartDoesNotBlockOnKmsgFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kmsg")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = node.Simulated
	cfg.Xid.KmsgPath = fifo
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	err := promptly(t, "Start", func() error { return r.Start(context.Background(), componenttest.NewNopHost()) }, openOther(fifo, os.O_RDONLY))
	require.NoError(t, err)
	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	assert.Positive(t, md.MetricCount(), "the simulated GPUs are scraped")
	require.NoError(t, promptly(t, "Shutdown", func() error { return r.Shutdown(context.Background()) }, openOther(fifo, os.O_RDONLY)))
	info, err := os.Stat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, info.Mode().Type(), "the FIFO is left in place, not replaced by a file")
}

// A scenario path that is a FIFO is refused at once, naming the key, instead of blocking
// Start until something writes to it.
func TestStartDoesNotBlockOnScenarioFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "scenario.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = node.Simulated
	cfg.Simulated.Scenario = fifo
	cfg.Xid.KmsgPath = ""
	r := newGPUMemReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	err := promptly(t, "Start", func() error { return r.Start(context.Background(), componenttest.NewNopHost()) }, openOther(fifo, os.O_WRONLY))
	require.ErrorContains(t, err, "'simulated.scenario'")
	assert.ErrorContains(t, err, "not a regular file")
	require.NoError(t, r.Shutdown(context.Background()))
}

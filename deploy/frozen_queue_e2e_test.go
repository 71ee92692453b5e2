//go:build e2e

package deploy_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// loopMount mounts a fresh 64 MiB ext4 filesystem on dir, a file on a loop device, and
// returns a function that freezes it (fsfreeze -f) until the returned thaw is called. It
// skips the test where that cannot be done here (not root, no loop devices, no mkfs.ext4):
// freezing needs a real mount.
func loopMount(t *testing.T, dir string) (freeze func() (thaw func())) {
	t.Helper()
	for _, tool := range []string{"mkfs.ext4", "mount", "umount", "fsfreeze"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: a frozen filesystem cannot be made here", tool)
		}
	}
	img := filepath.Join(t.TempDir(), "queue.ext4")
	require.NoError(t, os.WriteFile(img, nil, 0o600))
	require.NoError(t, os.Truncate(img, 64<<20))
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot loop-mount a filesystem here (root and a loop device are needed): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return func() func() {
		out, err := exec.Command("fsfreeze", "-f", dir).CombinedOutput()
		require.NoError(t, err, "fsfreeze -f: %s", out)
		thawed := false
		thaw := func() {
			if !thawed {
				thawed = true
				out, err := exec.Command("fsfreeze", "-u", dir).CombinedOutput()
				assert.NoError(t, err, "fsfreeze -u: %s", out)
			}
		}
		// Registered after the gateway's own clean-up, so it runs first: a process blocked
		// on a frozen filesystem cannot be killed until it is thawed.
		t.Cleanup(thaw)
		return thaw
	}
}

// TestGatewayFrozenQueue reproduces deploy/README.md "Health when the queue cannot be
// written" with the shipped gateway: its disk queue on a filesystem of its own, frozen as
// fsfreeze (or a snapshot tool that does not thaw) leaves it. While frozen, a request the
// gateway receives is not acknowledged (the queue's write blocks; the sender's deadline ends
// it, and a sender keeps it to send again), and readiness still answers 200: the decision
// documented there, which leaves the signal to TelemetryQueueStalled. Once thawed, the
// gateway acknowledges again and every record it ever acknowledged reaches the backend.
func TestGatewayFrozenQueue(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("freezing a filesystem needs root")
	}
	pk := newPKI(t)
	be := newBackend()
	backendAddr := e2eharness.FreeAddr(t)
	be.serve(t, backendAddr, pk.serverTLS(t))

	gp := gatewayPod(t)
	queueDir := str(gp.config, "extensions", "safe_file_storage/queue", "directory")
	m, _ := gp.mountOf(queueDir)
	require.NotNil(t, m, "the gateway's queue %s is on a volume", queueDir)
	var freeze func() func()
	gw := startGateway(t, pk, backendAddr, func(dirs map[string]string) {
		freeze = loopMount(t, dirs[str(m, "mountPath")])
	})
	s := dial(t, gw.grpcAddr, pk.pool, goodToken)

	var acked []string
	send := func(batch string) error {
		bodies := make([]string, 20)
		for i := range bodies {
			bodies[i] = fmt.Sprintf("frozen-%s-%02d", batch, i)
		}
		err := s.sendLogs(logsOf("frozen-node", bodies...))
		if err == nil {
			acked = append(acked, bodies...)
		}
		return err
	}
	delivered := func() bool {
		for _, b := range acked {
			if be.count(b) == 0 {
				return false
			}
		}
		return true
	}
	ready := func() int {
		resp, err := http.Get("http://" + gw.health + "/") //nolint:noctx // a probe
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	for b := 0; b < 3; b++ {
		require.NoError(t, send(fmt.Sprint("before-", b)))
	}
	eventually(t, 30*time.Second, "the records sent before the freeze at the backend", delivered, gw.proc)

	thaw := freeze()
	start := time.Now()
	err := send("while-frozen")
	require.Error(t, err, "a request is not acknowledged while the queue's filesystem is frozen")
	t.Logf("while frozen: the request ended after %v with %v", time.Since(start).Round(100*time.Millisecond), err)
	assert.True(t, strings.Contains(err.Error(), "DeadlineExceeded"), "it hangs until the sender's deadline: %v", err)
	assert.Equal(t, http.StatusOK, ready(), "readiness answers 200 while the queue cannot be written (the documented decision)")
	assert.False(t, gw.proc.Exited(), "the gateway keeps running")

	thaw()
	eventually(t, 30*time.Second, "an acknowledged request after the thaw", func() bool {
		return send(fmt.Sprint("after-", time.Now().UnixNano())) == nil
	}, gw.proc)
	eventually(t, 60*time.Second, "every acknowledged record at the backend after the thaw", delivered, gw.proc)
	t.Logf("after the thaw: all %d acknowledged records delivered", len(acked))
}

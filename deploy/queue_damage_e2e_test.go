//go:build e2e

package deploy_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// The damage a power loss or a full disk leaves in a queue database while the collector is
// stopped, and whether bbolt can still read the file (it keeps two meta pages).
var queueDamages = []struct {
	name    string
	damage  func(t *testing.T, path string, size int64)
	discard bool // the file is moved aside and its content lost
}{
	{"truncated", func(t *testing.T, path string, size int64) { require.NoError(t, os.Truncate(path, size/2)) }, true},
	{"garbage_in_middle", func(t *testing.T, path string, size int64) {
		junk := make([]byte, size/3)
		_, _ = rand.Read(junk)
		writeAt(t, path, size/3, junk)
	}, true},
	{"both_meta_pages_zeroed", func(t *testing.T, path string, _ int64) {
		writeAt(t, path, 0, make([]byte, 2*os.Getpagesize()))
	}, true},
	{"zero_bytes", func(t *testing.T, path string, _ int64) { require.NoError(t, os.Truncate(path, 0)) }, true},
	{"first_meta_page_zeroed", func(t *testing.T, path string, _ int64) {
		writeAt(t, path, 0, make([]byte, os.Getpagesize()))
	}, false},
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestGatewayDamagedQueue runs the shipped gateway with the backend down until its disk queue
// holds 2,000 acknowledged log records, SIGKILLs it, damages the logs exporter's database as
// a power loss or a full disk does, and starts it again. It starts (no crash loop), says once
// at ERROR which file it moved aside and that its content is lost, counts it in
// otelcol_extension_safe_file_storage_databases_discarded, and delivers new data once the
// backend is up. A file bbolt can still read (one meta page lost) is kept and delivered.
//
// QUEUE_DAMAGE_STORAGE=file_storage runs the same with contrib's file_storage (recreate: true)
// in its place: how the collector fared before safe_file_storage.
func TestGatewayDamagedQueue(t *testing.T) {
	for _, d := range queueDamages {
		t.Run(d.name, func(t *testing.T) {
			pk := newPKI(t)
			backendAddr := e2eharness.FreeAddr(t) // nothing listens here until after the damage
			gw := startGateway(t, pk, backendAddr)
			s := dial(t, gw.grpcAddr, pk.pool, goodToken)
			pad := strings.Repeat("x", 1000)
			const batches, perBatch = 40, 50
			var acked []string
			for b := 0; b < batches; b++ {
				bodies := make([]string, perBatch)
				for i := range bodies {
					bodies[i] = fmt.Sprintf("damage-%02d-%02d-%s", b, i, pad)
				}
				if err := s.sendLogs(logsOf("damage-node", bodies...)); err == nil {
					acked = append(acked, bodies...)
				}
			}
			require.Len(t, acked, batches*perBatch, "the gateway acknowledges everything into its queue")
			time.Sleep(2 * time.Second)
			gw.proc.Stop(syscall.SIGKILL)

			// The config as the gateway ran it: the queue directory, then own metrics served.
			cfgPath := gw.proc.Args()[1]
			raw, err := os.ReadFile(cfgPath)
			require.NoError(t, err)
			storageID := "safe_file_storage/queue"
			if os.Getenv("QUEUE_DAMAGE_STORAGE") == "file_storage" {
				raw = []byte(strings.ReplaceAll(string(raw), "safe_file_storage/queue", "file_storage/queue"))
				storageID = "file_storage/queue"
			}
			var cfg map[string]any
			require.NoError(t, yaml.Unmarshal(raw, &cfg))
			delete(mapAt(cfg, "extensions", storageID), "check_timeout") // safe_file_storage's own key
			dir := str(cfg, "extensions", storageID, "directory")
			port := e2eharness.FreePort(t)
			mapAt(cfg, "service")["telemetry"] = map[string]any{"metrics": map[string]any{"readers": []any{
				map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": port}}}},
			}}}
			out, err := yaml.Marshal(cfg)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cfgPath, out, 0o600))

			files, err := filepath.Glob(filepath.Join(dir, "exporter_otlp_grpc*logs*"))
			require.NoError(t, err)
			require.Len(t, files, 1, "the logs exporter's queue in %s", dir)
			queue := files[0]
			info, err := os.Stat(queue)
			require.NoError(t, err)
			d.damage(t, queue, info.Size())

			be := newBackend()
			be.serve(t, backendAddr, pk.serverTLS(t))
			logStart := len(gw.proc.Output())
			gw.proc.Start()
			e2eharness.WaitListening(t, gw.proc, gw.grpcAddr, 30*time.Second)
			s = dial(t, gw.grpcAddr, pk.pool, goodToken)
			eventually(t, 60*time.Second, "new records at the backend after the restart", func() bool {
				body := fmt.Sprint("after-", time.Now().UnixNano())
				return s.sendLogs(logsOf("damage-node", body)) == nil && func() bool {
					deadline := time.Now().Add(10 * time.Second)
					for time.Now().Before(deadline) {
						if be.count(body) > 0 {
							return true
						}
						time.Sleep(200 * time.Millisecond)
					}
					return false
				}()
			}, gw.proc)
			// What the queue still held has had its chance: it is sent before the new batch.
			time.Sleep(3 * time.Second)
			delivered := 0
			for _, b := range acked {
				if be.count(b) > 0 {
					delivered++
				}
			}
			require.False(t, gw.proc.Exited(), "the gateway keeps running")
			log := gw.proc.Output()[logStart:]
			errLines := strings.Count(log, "The storage file is damaged")
			metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
			const discarded = "otelcol_extension_safe_file_storage_databases_discarded"
			counted := scrapeCounters(t, metricsURL, discarded)[discarded]
			moved, err := filepath.Glob(queue + ".*")
			require.NoError(t, err)
			t.Logf("%s: file %d bytes; started; %d of %d acknowledged records delivered, %d lost; %d ERROR lines; %s %v; moved aside: %v",
				d.name, info.Size(), delivered, len(acked), len(acked)-delivered, errLines, discarded, counted, moved)
			if !d.discard {
				assert.Zero(t, errLines)
				assert.Zero(t, counted)
				assert.Positive(t, delivered, "a file bbolt can read keeps its queue")
				return
			}
			assert.Equal(t, 1, errLines, "one ERROR line:\n%s", log)
			assert.Contains(t, log, queue, "the ERROR names the file")
			assert.Equal(t, 1.0, counted, "the loss is counted")
			assert.Len(t, moved, 1, "the damaged file is kept aside for inspection")
		})
	}
}

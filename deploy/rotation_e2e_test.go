//go:build e2e

package deploy_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// startAgentWithTelemetry is startAgent with the shipped agent's own metrics served (on a free
// loopback port instead of :8888) and its token file where the test can rotate it. It returns
// the directory that stands for /var/log/pods, the token file and the metrics URL.
func startAgentWithTelemetry(t *testing.T, pk pki, gatewayAddr string) (pods, tokenFile, metricsURL string, p *e2eharness.Process) {
	t.Helper()
	ap, cfg, dirs, tokenFile, health := simulatedAgent(t, pk)

	readers, _ := get(cfg, "service", "telemetry", "metrics", "readers").([]any)
	require.Len(t, readers, 1, "the shipped agent serves its own metrics")
	prom := mapAt(readers[0], "pull", "exporter", "prometheus")
	require.Equal(t, "${env:MY_POD_IP}", prom["host"], "on the pod IP, where Prometheus reaches it")
	require.EqualValues(t, 8888, prom["port"])
	port := e2eharness.FreePort(t)
	prom["port"] = port

	env := append(podEnv(ap), "OTELCOL_GATEWAY_ENDPOINT="+gatewayAddr, "MY_POD_IP=127.0.0.1")
	p = startConfig(t, "agent", cfg, env, podArgs(ap)...)
	e2eharness.WaitListening(t, p, health, 30*time.Second)
	return dirs["/var/log/pods"], tokenFile, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), p
}

// scrapeCounters returns the samples of the named metrics (any labels) in a Prometheus text
// exposition, summed by name.
func scrapeCounters(t *testing.T, url string, names ...string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, n := range names {
			if !strings.HasPrefix(line, n+"{") && !strings.HasPrefix(line, n+" ") {
				continue
			}
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			require.NoError(t, err, line)
			out[n] += v
		}
	}
	return out
}

// TestFleetTokenRotationWrongOrder runs a rotation done in the wrong order with the shipped
// configs: the gateway already requires the new token while the agent still sends the old one
// for window. The collector's OTLP exporter treats Unauthenticated as permanent (otlpexporter's
// shouldRetry) and would drop every batch sent in that window (measured before auth_retry: 106
// of 206 lines, 10.6 s, and 2,840 metric points); the agent's exporter lists the auth_retry
// middleware, which makes it Unavailable, so the batches wait in the agent's disk queue and are
// delivered once the agent sends the new token: nothing is lost, nothing is counted in the
// agent's otelcol_exporter_send_failed_* (TelemetryExportDropped stays quiet), and the agent
// says what happened (deploy/README.md, "Rotating without dropping data").
func TestFleetTokenRotationWrongOrder(t *testing.T) {
	const newToken = "fleet-test-token-NEW-fedcba9876543210"
	const window = 10 * time.Second
	pk := newPKI(t)
	be := newBackend()
	backendAddr := e2eharness.FreeAddr(t)
	be.serve(t, backendAddr, pk.serverTLS(t))
	gw := startGateway(t, pk, backendAddr)
	pods, agentToken, metricsURL, agent := startAgentWithTelemetry(t, pk, gw.grpcAddr)

	// A pod writes a numbered line every 100 ms for the whole test.
	var mu sync.Mutex
	written := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				mu.Lock()
				writePodLog(t, pods, fmt.Sprintf("rotation-seq-%05d", written))
				written++
				mu.Unlock()
			}
		}
	}()
	seq := func() int { mu.Lock(); defer mu.Unlock(); return written }
	line := func(i int) string { return fmt.Sprintf("rotation-seq-%05d", i) }
	defer func() { close(stop); wg.Wait() }()

	// file_log starts at the end of the files of its first poll: the first line through marks
	// the start of what must arrive.
	first := -1
	eventually(t, 60*time.Second, "the pod's lines at the backend", func() bool {
		for i := 0; i < seq(); i++ {
			if be.count(line(i)) > 0 {
				first = i
				return true
			}
		}
		return false
	}, gw.proc, agent)
	time.Sleep(3 * time.Second)

	// The wrong order: the gateway's Secret holds only the new token.
	require.NoError(t, os.WriteFile(gw.tokenFile, []byte(newToken+"\n"), 0o600))
	probe := dial(t, gw.grpcAddr, pk.pool, goodToken)
	eventually(t, 30*time.Second, "the gateway refusing the old token", func() bool {
		return status.Code(probe.sendLogs(logsOf("probe-node", "probe"))) == codes.Unauthenticated
	}, gw.proc)
	switched := seq()
	time.Sleep(window)
	// The agent's copy of the Secret catches up.
	require.NoError(t, os.WriteFile(agentToken, []byte(newToken+"\n"), 0o600))
	fixed := seq()
	time.Sleep(5 * time.Second)
	end := seq()
	lostLines := func() []int {
		var lost []int
		for i := first; i < end; i++ {
			if be.count(line(i)) == 0 {
				lost = append(lost, i)
			}
		}
		return lost
	}
	// Everything, the window's lines included, reaches the backend (the agent's retry backs
	// off to at most 30 s between attempts).
	deadline := time.Now().Add(90 * time.Second)
	for len(lostLines()) > 0 && time.Now().Before(deadline) && !agent.Exited() {
		time.Sleep(500 * time.Millisecond)
	}
	lost := lostLines()
	var ranges []string
	for i := 0; i < len(lost); {
		j := i
		for j+1 < len(lost) && lost[j+1] == lost[j]+1 {
			j++
		}
		ranges = append(ranges, fmt.Sprintf("%d-%d", lost[i], lost[j]))
		i = j + 1
	}
	// The names as the collector serves them (and deploy/prometheus/alerts.yaml reads them).
	const failedLogs, failedPoints = "otelcol_exporter_send_failed_log_records", "otelcol_exporter_send_failed_metric_points"
	failed := scrapeCounters(t, metricsURL, failedLogs, failedPoints)
	out := agent.Output()
	t.Logf("lines %d..%d; gateway switched at %d, agent fixed at %d (%v); lost %d lines (%.1f s: %v); agent send_failed: %v",
		first, end, switched, fixed, window, len(lost), float64(len(lost))/10, ranges, failed)

	// A mistaken order delays data, it does not lose it ...
	assert.Empty(t, lost, "lines lost in a wrong-order rotation")
	assert.Zero(t, failed[failedLogs], "log records dropped by the agent (%s)", failedLogs)
	assert.Zero(t, failed[failedPoints], "metric points dropped by the agent (%s)", failedPoints)
	assert.Zero(t, strings.Count(out, "Dropping data"), "the agent drops nothing (its log: 'Exporting failed. Dropping data.')")
	// ... and the agent says why it waits, and when it stops waiting.
	assert.True(t, strings.Contains(out, "The server refuses this exporter's credentials"), "the agent logs the refusal (auth_retry)")
	assert.True(t, strings.Contains(out, "The server accepts this exporter's credentials again"), "the agent logs the end of the refusal (auth_retry)")
}

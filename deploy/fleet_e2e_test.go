//go:build e2e

package deploy_test

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

const goodToken = "fleet-test-token-0123456789abcdef"

// gateway is the shipped gateway configuration running on loopback.
type gateway struct {
	proc               *e2eharness.Process
	grpcAddr, httpAddr string
	tokenFile          string // the token Secret's file, as the gateway reads it
	health             string // the first health_check's address
}

// startGateway runs deploy/kubernetes' gateway config with the test's CA-signed certificate
// and token in the places its Secrets are mounted, exporting to backendAddr. Each prepare
// function is given the directory that stands for every mount path before the start.
func startGateway(t *testing.T, pk pki, backendAddr string, prepare ...func(dirs map[string]string)) *gateway {
	t.Helper()
	return startGatewayEdited(t, pk, backendAddr, nil, prepare...)
}

// startGatewayEdited is startGateway with the shipped config changed by edit first (nil: as
// shipped), to measure what a setting buys.
func startGatewayEdited(t *testing.T, pk pki, backendAddr string, edit func(cfg map[string]any), prepare ...func(dirs map[string]string)) *gateway {
	t.Helper()
	gp := gatewayPod(t)
	cfg := deepCopy(t, gp.config)
	if edit != nil {
		edit(cfg)
	}
	grpcTLS := mapAt(cfg, "receivers", "otlp", "protocols", "grpc", "tls")
	tlsMount, _ := gp.mountOf(str(grpcTLS, "cert_file"))
	tokenPath := str(cfg, "extensions", "bearertokenauth/agents", "filename")
	tokenMount, _ := gp.mountOf(tokenPath)
	require.NotNil(t, tlsMount, "the gateway's certificate is on a mounted Secret")
	require.NotNil(t, tokenMount, "the gateway's token is on a mounted Secret")

	dirs := mountDirs(t, gp, t.TempDir())
	for _, f := range prepare {
		f(dirs)
	}
	pk.writeTLSSecret(t, dirs[str(tlsMount, "mountPath")])
	cfg = rewritePaths(cfg, dirs).(map[string]any)
	require.NoError(t, os.WriteFile(str(cfg, "extensions", "bearertokenauth/agents", "filename"), []byte(goodToken+"\n"), 0o600))

	g := &gateway{grpcAddr: e2eharness.FreeAddr(t), httpAddr: e2eharness.FreeAddr(t),
		tokenFile: str(cfg, "extensions", "bearertokenauth/agents", "filename")}
	mapAt(cfg, "receivers", "otlp", "protocols", "grpc")["endpoint"] = g.grpcAddr
	mapAt(cfg, "receivers", "otlp", "protocols", "http")["endpoint"] = g.httpAddr
	g.health = moveHealthChecks(t, cfg)
	quietTelemetry(cfg)

	env := append(podEnv(gp),
		"OTLP_BACKEND_ENDPOINT="+backendAddr,
		"OTLP_BACKEND_CA_FILE="+filepath.Join(dirs[str(tlsMount, "mountPath")], "ca.crt"))
	g.proc = startConfig(t, "gateway", cfg, env, podArgs(gp)...)
	e2eharness.WaitListening(t, g.proc, g.grpcAddr, 30*time.Second)
	return g
}

// simulatedAgent is deploy/kubernetes' agent config made to run here: the simulated backend
// behind the same receiver (no GPU, no kernel log), its mounts in temp directories, the CA and
// token its Secrets would hold, and the health checks on free ports. It returns the pod, the
// config, the mount directories by mount path, the token file and the readiness endpoint.
func simulatedAgent(t *testing.T, pk pki) (ap pod, cfg map[string]any, dirs map[string]string, tokenFile, health string) {
	t.Helper()
	ap = agentPods(t)[0]
	cfg = deepCopy(t, ap.config)
	exp := mapAt(cfg, "exporters", "otlp_grpc")
	caMount, _ := ap.mountOf(str(exp, "tls", "ca_file"))
	require.NotNil(t, caMount, "the agent's CA is on a mounted Secret")

	dirs = mountDirs(t, ap, t.TempDir())
	dirs[str(mapAt(cfg, "receivers", "gpu_mem", "processes"), "proc_root")] = "/proc"
	pk.writeTLSSecret(t, dirs[str(caMount, "mountPath")])
	cfg = rewritePaths(cfg, dirs).(map[string]any)
	tokenFile = str(cfg, "extensions", "bearertokenauth/gateway", "filename")
	require.NoError(t, os.WriteFile(tokenFile, []byte(goodToken+"\n"), 0o600))

	gm := mapAt(cfg, "receivers", "gpu_mem")
	gm["backend"] = "simulated"
	mapAt(gm, "xid")["kmsg_path"] = ""
	health = moveHealthChecks(t, cfg)
	return ap, cfg, dirs, tokenFile, health
}

// startAgent runs the simulated agent (simulatedAgent) sending to the gateway, its own
// metrics off. It returns the directory that stands for /var/log/pods.
func startAgent(t *testing.T, pk pki, gatewayAddr string) string {
	t.Helper()
	ap, cfg, dirs, _, health := simulatedAgent(t, pk)
	quietTelemetry(cfg)
	env := append(podEnv(ap), "OTELCOL_GATEWAY_ENDPOINT="+gatewayAddr, "MY_POD_IP=127.0.0.1")
	p := startConfig(t, "agent", cfg, env, podArgs(ap)...)
	e2eharness.WaitListening(t, p, health, 30*time.Second)
	return dirs["/var/log/pods"]
}

// writePodLog appends a CRI-format line to a container's log file the way the kubelet lays
// them out (/var/log/pods/<ns>_<pod>_<uid>/<container>/0.log).
func writePodLog(t *testing.T, podsDir, line string) {
	t.Helper()
	dir := filepath.Join(podsDir, "ml_trainer-0_8a6e3a2c-1111-4c4b-9a51-0a1b2c3d4e5f", "trainer")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	f, err := os.OpenFile(filepath.Join(dir, "0.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), line)
	require.NoError(t, err)
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool, procs ...*e2eharness.Process) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		for _, p := range procs {
			if p.Exited() {
				t.Fatalf("%s exited while waiting for %s:\n%s", p.Name(), what, p.Output())
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}

// A PyTorch 2.x OOM as it is printed (the form the parser's corpus cites); classified at the
// gateway by whatever that host's window holds.
const oomLine = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.05 GiB is free. Process 4242 has 78.04 GiB memory in use. Of the allocated memory 70.12 GiB is allocated by PyTorch, and 7.35 GiB is reserved by PyTorch but unallocated."

// The secured path: the shipped agent gets through the shipped gateway with TLS and the
// token; a sender without TLS, without a token or with a wrong one is refused on both OTLP
// protocols, and nothing it sent reaches the exporter or the classifier's window.
func TestFleetAuthentication(t *testing.T) {
	t.Parallel()
	pk := newPKI(t)
	be := newBackend()
	backendAddr := e2eharness.FreeAddr(t)
	be.serve(t, backendAddr, pk.serverTLS(t))
	gw := startGateway(t, pk, backendAddr)

	// (1) The agent, as shipped: its metrics and a pod's log line arrive at the backend.
	pods := startAgent(t, pk, gw.grpcAddr)
	const appLine = "fleet-auth: epoch 1 started on the trainer"
	// file_log starts at the end of files it finds on its first poll (start_at: end, as
	// shipped): the line is written again until a poll after that has read it.
	last := time.Time{}
	eventually(t, 60*time.Second, "the agent's metrics and log line at the backend", func() bool {
		if time.Since(last) > 2*time.Second {
			writePodLog(t, pods, appLine)
			last = time.Now()
		}
		_, hosts := be.snapshot()
		return hosts["gpu-node-1"] > 0 && be.count(appLine) > 0
	}, gw.proc)

	// (2) Refused senders, each trying to fill host forged-node's window and to write a record.
	type attempt struct {
		name string
		s    *sender
		code codes.Code
	}
	attempts := []attempt{
		{"plaintext", dial(t, gw.grpcAddr, nil, goodToken), codes.Unavailable},
		{"tls-no-token", dial(t, gw.grpcAddr, pk.pool, ""), codes.Unauthenticated},
		{"tls-wrong-token", dial(t, gw.grpcAddr, pk.pool, "not-the-token"), codes.Unauthenticated},
	}
	for _, a := range attempts {
		err := a.s.sendMetrics(gpuMetricsOf("forged-node", 75<<30))
		assert.Equal(t, a.code, status.Code(err), "%s: metrics must be refused", a.name)
		err = a.s.sendLogs(logsOf("forged-node", "forged-"+a.name))
		assert.Equal(t, a.code, status.Code(err), "%s: logs must be refused", a.name)
	}
	for name, code := range map[string]int{
		"http-plaintext":   postHTTP(t, "http://"+gw.httpAddr, nil, goodToken, "forged-http-plaintext"),
		"http-no-token":    postHTTP(t, "https://"+gw.httpAddr, &pk, "", "forged-http-no-token"),
		"http-wrong-token": postHTTP(t, "https://"+gw.httpAddr, &pk, "wrong", "forged-http-wrong-token"),
	} {
		assert.NotEqual(t, http.StatusOK, code, "%s must be refused", name)
		if name != "http-plaintext" {
			assert.Equal(t, http.StatusUnauthorized, code, name)
		}
	}
	require.Equal(t, http.StatusOK, postHTTP(t, "https://"+gw.httpAddr, &pk, goodToken, "fleet-auth: over http with the token"))

	// (3) The window: a host's single GPU names the OOM's GPU (hw.id) only if that host's
	// metrics reached the classifier. control-node's metrics come with the token, forged-node's
	// were all refused above.
	good := dial(t, gw.grpcAddr, pk.pool, goodToken)
	require.NoError(t, good.sendMetrics(gpuMetricsOf("control-node", 75<<30)))
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, good.sendMetrics(gpuMetricsOf("control-node", 75<<30)))
	require.NoError(t, good.sendLogs(logsOf("control-node", "control: "+oomLine)))
	require.NoError(t, good.sendLogs(logsOf("forged-node", "unfed: "+oomLine)))
	var control, forged plog.LogRecord
	eventually(t, 30*time.Second, "both OOM records classified at the backend", func() bool {
		var ok1, ok2 bool
		control, ok1 = be.recordWith("control: ")
		forged, ok2 = be.recordWith("unfed: ")
		return ok1 && ok2 && be.count("fleet-auth: over http with the token") > 0
	}, gw.proc)
	hw, ok := control.Attributes().Get("hw.id")
	require.True(t, ok, "control: accepted metrics must reach the window: %v", control.Attributes().AsRaw())
	assert.Equal(t, "GPU-forged-0", hw.Str())
	_, ok = forged.Attributes().Get("hw.id")
	assert.False(t, ok, "forged-node: refused metrics reached the window: %v", forged.Attributes().AsRaw())
	_, ok = forged.Attributes().Get("gpu.oom.cause")
	assert.True(t, ok, "the accepted OOM record is still classified")

	bodies, hosts := be.snapshot()
	assert.Zero(t, hosts["forged-node"], "refused metrics reached the exporter")
	for body := range bodies {
		assert.NotContains(t, body, "forged-", "a refused record reached the exporter")
	}
}

// postHTTP sends one OTLP/HTTP protobuf logs request and returns the status code (0 when the
// request failed before any answer).
func postHTTP(t *testing.T, base string, pk *pki, token, body string) int {
	t.Helper()
	req := plogotlp.NewExportRequestFromLogs(logsOf("forged-node", body))
	data, err := req.MarshalProto()
	require.NoError(t, err)
	client := &http.Client{Timeout: 5 * time.Second}
	if pk != nil {
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pk.pool, MinVersion: tls.VersionTLS13}}
	}
	hr, err := http.NewRequest(http.MethodPost, base+"/v1/logs", bytes.NewReader(data))
	require.NoError(t, err)
	hr.Header.Set("Content-Type", "application/x-protobuf")
	if token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(hr)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

// The durable path: with the backend down, the gateway acknowledges what it accepts into its
// disk queue; killed with SIGKILL and started again, it delivers every acknowledged record
// once the backend is back. Delivery is at least once: the count of duplicates is logged.
func TestFleetDurableAcrossSIGKILL(t *testing.T) {
	t.Parallel()
	pk := newPKI(t)
	backendAddr := e2eharness.FreeAddr(t) // nothing listens here until after the kill
	gw := startGateway(t, pk, backendAddr)
	s := dial(t, gw.grpcAddr, pk.pool, goodToken)

	const batches, perBatch = 40, 25
	var acked []string
	for b := 0; b < batches; b++ {
		bodies := make([]string, perBatch)
		for i := range bodies {
			bodies[i] = fmt.Sprintf("durable-%02d-%02d", b, i)
		}
		if err := s.sendLogs(logsOf("durable-node", bodies...)); err == nil {
			acked = append(acked, bodies...)
		}
		require.NoError(t, s.sendMetrics(gpuMetricsOf("durable-node", int64(b)<<30)))
	}
	require.Len(t, acked, batches*perBatch, "a gateway with room in its disk queue acknowledges everything")
	// Let the exporters fail against the absent backend at least once, then kill.
	time.Sleep(2 * time.Second)
	gw.proc.Stop(syscall.SIGKILL)

	be := newBackend()
	be.serve(t, backendAddr, pk.serverTLS(t))
	gw.proc.Start()

	eventually(t, 90*time.Second, "every acknowledged record at the backend", func() bool {
		for _, b := range acked {
			if be.count(b) == 0 {
				return false
			}
		}
		return true
	}, gw.proc)
	bodies, hosts := be.snapshot()
	dups := 0
	for _, b := range acked {
		dups += bodies[b] - 1
	}
	t.Logf("delivered %d of %d acknowledged log records after SIGKILL, %d duplicates; %d metric points of durable-node",
		len(acked), len(acked), dups, hosts["durable-node"])
	eventually(t, 30*time.Second, "the acknowledged metrics at the backend", func() bool {
		_, hosts := be.snapshot()
		return hosts["durable-node"] >= batches
	}, gw.proc)
}

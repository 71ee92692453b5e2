//go:build e2e && image

package deploy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// The image test (`make image-test`, part of `make test`): the image `make image` built
// ($OTELCOL_GPUMEM_IMAGE) runs as the agent DaemonSet runs it, and everything is asserted from
// outside the container. What the pod spec says becomes engine flags: the user and group,
// capabilities, no privilege escalation, a read-only root filesystem, each volume mounted
// where the pod mounts it (host paths that exist here as themselves, the rest as temporary
// directories), the container's environment (downward-API values stood in), its command and
// arguments. The configuration is the agent ConfigMap's with only what the simulated backend
// needs changed (backend: simulated; the simulator's kernel records, and its own kubelet
// socket and pod log directory (TMPDIR), in the writable volume: on the real backend they come
// from /dev/kmsg and the kubelet's mounts) and what host networking on a shared machine
// needs (the health checks on free loopback ports, the collector's own metrics server off).
// The gateway is a TLS OTLP sink on loopback that checks the agent's bearer token.

const imageNode = "gpu-node-1" // spec.nodeName, as podEnv stands it in

func engineCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	script, err := filepath.Abs("../scripts/container-engine.sh")
	require.NoError(t, err)
	return exec.Command(script, args...)
}

// engineOut runs the engine and returns its trimmed standard output.
func engineOut(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := engineCmd(t, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = fmt.Errorf("%s %s: %w: %s", "engine", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out)), err
}

// imageRun is how the agent pod would be started by an engine: its flags and arguments.
type imageRun struct {
	flags   []string
	args    []string
	health  string // the readiness health_check's address
	token   string
	pki     pki
	volumes map[string]string // mountPath → host directory or file
}

// agentRun turns the DaemonSet's pod into engine flags, sending to gateway.
func agentRun(t *testing.T, p pod, engine, gateway string) imageRun {
	t.Helper()
	r := imageRun{token: "image-test-token", pki: newPKI(t), volumes: map[string]string{}}
	root := t.TempDir()

	cfg := deepCopy(t, p.config)
	gpu := mapAt(cfg, "receivers", "gpu_mem")
	gpu["backend"] = "simulated"
	var writable string
	for _, m := range maps(listAt(p.container, "volumeMounts")) {
		if m["readOnly"] != true {
			writable = str(m, "mountPath")
		}
	}
	require.NotEmpty(t, writable, "the agent has a writable volume (its queue)")
	mapAt(gpu, "xid")["kmsg_path"] = writable + "/simulated-kmsg"
	// The simulated node serves its scenario's pods from a kubelet socket and pod log
	// directory of its own, made under TMPDIR: on the real backend the kubelet's are mounted.
	r.flags = append(r.flags, "--env", "TMPDIR="+writable)
	r.health = readinessHealthCheck(t, p, cfg)
	quietTelemetry(cfg)

	psc := mapAt(p.spec, "securityContext")
	r.flags = append(r.flags, "--user", fmt.Sprintf("%v:%v", psc["runAsUser"], psc["runAsGroup"]), "--network", "host")
	sc := mapAt(p.container, "securityContext")
	if sc["readOnlyRootFilesystem"] == true {
		r.flags = append(r.flags, "--read-only")
		if engine == "podman" {
			// podman mounts tmpfs on /tmp, /var/tmp and /run of a read-only container; the
			// kubelet does not.
			r.flags = append(r.flags, "--read-only-tmpfs=false")
		}
	}
	if sc["allowPrivilegeEscalation"] == false {
		r.flags = append(r.flags, "--security-opt", "no-new-privileges")
	}
	for _, c := range strs(sc, "capabilities", "drop") {
		r.flags = append(r.flags, "--cap-drop", c)
	}
	for _, c := range strs(sc, "capabilities", "add") {
		r.flags = append(r.flags, "--cap-add", c)
	}
	for _, kv := range podEnv(p) {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH": // the image's own
			continue
		case "MY_POD_IP": // host networking: the pod's address is loopback
			kv = "MY_POD_IP=127.0.0.1"
		case "OTELCOL_GATEWAY_ENDPOINT":
			kv = name + "=" + gateway
		}
		r.flags = append(r.flags, "--env", kv)
	}

	for _, m := range maps(listAt(p.container, "volumeMounts")) {
		mp := str(m, "mountPath")
		v := byName(listAt(p.spec, "volumes"), str(m, "name"))
		require.NotNil(t, v, "volume %s", m["name"])
		src := filepath.Join(root, str(m, "name"))
		switch {
		case v["configMap"] != nil:
			require.NoError(t, os.MkdirAll(src, 0o700))
			text := mustYAML(t, cfg)
			require.NoError(t, os.WriteFile(filepath.Join(src, "agent.yaml"), []byte(text), 0o600))
		case v["secret"] != nil && str(m, "name") == "tls":
			r.pki.writeTLSSecret(t, src)
		case v["secret"] != nil && str(m, "name") == "token":
			require.NoError(t, os.MkdirAll(src, 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(src, "token"), []byte(r.token+"\n"), 0o600))
		case v["secret"] != nil:
			t.Fatalf("secret volume %s: the image test does not know what to put in it", m["name"])
		case v["hostPath"] != nil:
			host := str(v, "hostPath", "path")
			if _, err := os.Stat(host); err == nil && m["readOnly"] == true {
				src = host // the node's own: /proc, /dev/kmsg
				break
			}
			switch str(v, "hostPath", "type") {
			case "", "Directory", "DirectoryOrCreate":
				require.NoError(t, os.MkdirAll(src, 0o700))
			default: // a socket or file the node has and this machine does not
				t.Logf("hostPath %s (%s) does not exist here: not mounted", host, str(v, "hostPath", "type"))
				continue
			}
		default:
			t.Fatalf("volume %s: unknown kind", m["name"])
		}
		opt := ""
		if m["readOnly"] == true {
			opt = ":ro"
		}
		r.flags = append(r.flags, "--volume", src+":"+mp+opt)
		r.volumes[mp] = src
	}
	require.Equal(t, []string{"/otelcol-gpumem"}, strs(p.container, "command"), "the image's entrypoint")
	r.args = strs(p.container, "args")
	return r
}

// mountPointOrAbove reports whether path is a volume's mount point or a directory above one.
func (r imageRun) mountPointOrAbove(path string) bool {
	for mp := range r.volumes {
		if under(mp, path) {
			return true
		}
	}
	return false
}

// readinessHealthCheck moves every health_check to a free loopback port and returns the
// address of the one the readiness probe asks.
func readinessHealthCheck(t *testing.T, p pod, cfg map[string]any) string {
	t.Helper()
	port := probePort(p, "readinessProbe")
	id, _ := healthCheckOn(t, p, port)
	require.NotEmpty(t, id, "the readiness probe's health_check")
	moveHealthChecks(t, cfg)
	return str(mapAt(cfg, "extensions", id), "http", "endpoint")
}

// tokenSink is the gateway stand-in: the fleet tests' TLS backend plus a count of requests
// that presented the agent's bearer token.
type tokenSink struct {
	*backend
	l               net.Listener
	mu              sync.Mutex
	authed, unauthd int
}

// listen opens the sink's port: its address is the agent's gateway endpoint.
func (s *tokenSink) listen(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s.l = l
	return l.Addr().String()
}

func (s *tokenSink) serve(t *testing.T, token string, p pki) {
	t.Helper()
	check := func(ctx context.Context) {
		md, _ := metadata.FromIncomingContext(ctx)
		s.mu.Lock()
		defer s.mu.Unlock()
		if a := md.Get("authorization"); len(a) == 1 && a[0] == "Bearer "+token {
			s.authed++
		} else {
			s.unauthd++
		}
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(p.serverTLS(t))),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			check(ctx)
			return h(ctx, req)
		}))
	plogotlp.RegisterGRPCServer(srv, s.backend)
	pmetricotlp.RegisterGRPCServer(srv, &metricsService{b: s.backend})
	go func() { _ = srv.Serve(s.l) }()
	t.Cleanup(srv.Stop)
}

// xidHosts lists the host.name of every resource that carried an Xid record.
func (s *tokenSink) xidHosts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backend.mu.Lock()
	defer s.backend.mu.Unlock()
	var hosts []string
	for _, ld := range s.logs {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			host, _ := rl.Resource().Attributes().Get("host.name")
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					if lrs.At(k).EventName() == "nvidia.gpu.xid" {
						hosts = append(hosts, host.AsString())
					}
				}
			}
		}
	}
	return hosts
}

func TestImage(t *testing.T) {
	image := os.Getenv("OTELCOL_GPUMEM_IMAGE")
	if image == "" {
		t.Fatal("OTELCOL_GPUMEM_IMAGE is not set: run `make image-test`, which builds the image first")
	}
	engine, err := engineOut(t, "--which")
	require.NoError(t, err, "no container engine")
	engine = filepath.Base(engine)

	size, err := engineOut(t, "image", "inspect", "--format", "{{.Size}}", image)
	require.NoError(t, err)
	bytes, err := strconv.ParseInt(size, 10, 64)
	require.NoError(t, err)
	t.Logf("image %s: %.1f MB (%d bytes)", image, float64(bytes)/1e6, bytes)
	// debian:bookworm-slim (or the local minbase) + CA roots is ~85 MB, the binary ~90 MB;
	// a doubling means something unintended went in.
	assert.Less(t, bytes, int64(300e6), "the image stays lean")

	ms := loadManifests(t)
	p := podOf(t, ms, find(t, ms, "DaemonSet", "otelcol-gpumem-agent"))
	// Host networking shares the machine's ports: one the test chose free can be taken by
	// another program before the container binds it. That, and only that, is tried again.
	var (
		run  imageRun
		sink *tokenSink
		name string
	)
	for attempt := 1; ; attempt++ {
		sink = &tokenSink{backend: newBackend()}
		gateway := sink.listen(t)
		run = agentRun(t, p, engine, gateway)
		sink.serve(t, run.token, run.pki)
		name = fmt.Sprintf("otelcol-gpumem-image-test-%d-%d", os.Getpid(), attempt)
		startContainer(t, name, image, run)
		err := waitReady(t, name, run.health, 60*time.Second)
		if err == nil {
			break
		}
		if logs, _ := engineCmd(t, "logs", name).CombinedOutput(); attempt < 3 &&
			strings.Contains(string(logs), "bind: address already in use") {
			t.Logf("attempt %d: %v; a port chosen free was taken before the container bound it, again on new ports", attempt, err)
			_, _ = engineOut(t, "rm", "--force", name)
			continue
		}
		require.NoError(t, err)
	}

	// The process: the pod's uid and gid, SYSLOG its only capability, no new privileges.
	pid, err := engineOut(t, "inspect", "--format", "{{.State.Pid}}", name)
	require.NoError(t, err)
	status, err := os.ReadFile("/proc/" + pid + "/status")
	require.NoError(t, err)
	fields := map[string]string{}
	for _, line := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	psc := mapAt(p.spec, "securityContext")
	uid, gid := fmt.Sprint(psc["runAsUser"]), fmt.Sprint(psc["runAsGroup"])
	assert.Equal(t, strings.Repeat(uid+" ", 3)+uid, fields["Uid"], "real, effective, saved, fs uid")
	assert.Equal(t, strings.Repeat(gid+" ", 3)+gid, fields["Gid"])
	assert.Equal(t, "0000000400000000", fields["CapEff"], "CAP_SYSLOG (34) alone")
	assert.Equal(t, "0000000400000000", fields["CapBnd"])
	assert.Equal(t, "1", fields["NoNewPrivs"])

	// GPU metrics and an Xid record (the built-in scenario's Xid 31 at 20 s) reach the
	// gateway over TLS with the token, both under the node's name.
	require.Eventually(t, func() bool {
		_, hosts := sink.snapshot()
		return hosts[imageNode] > 0 && len(sink.xidHosts()) > 0
	}, 90*time.Second, 500*time.Millisecond, "metrics and an Xid record at the sink")
	_, hosts := sink.snapshot()
	assert.Equal(t, []string{imageNode}, sortedKeys(toAny(hosts)), "every metric resource names the node")
	for _, h := range sink.xidHosts() {
		assert.Equal(t, imageNode, h, "the Xid record names the node as its metrics do")
	}
	t.Logf("at the sink: %d metric points under %v, %d Xid records", hosts[imageNode], imageNode, len(sink.xidHosts()))
	sink.mu.Lock()
	assert.Positive(t, sink.authed)
	assert.Zero(t, sink.unauthd, "every export presented the bearer token")
	sink.mu.Unlock()

	// Nothing written outside the volumes (the queue and the simulator's file are inside).
	// The engine itself makes each mount point (and the directories above it) and, with host
	// networking, binds /etc/hosts and /etc/resolv.conf: those entries are its, not ours.
	diff, err := engineOut(t, "diff", name)
	require.NoError(t, err)
	var written []string
	for _, line := range strings.Split(diff, "\n") {
		kind, path, _ := strings.Cut(strings.TrimSpace(line), " ")
		if line == "" || (kind == "C" && path == "/etc") || run.mountPointOrAbove(path) {
			continue
		}
		written = append(written, line)
	}
	assert.Empty(t, written, "changes to the image's filesystem (engine diff):\n%s", diff)
	queue := run.volumes["/var/lib/otelcol-gpumem"]
	require.NotEmpty(t, queue)
	_, err = os.Stat(filepath.Join(queue, "queue"))
	assert.NoError(t, err, "the disk queue is in its volume")

	// A clean stop on SIGTERM within the pod's grace period.
	grace := fmt.Sprint(p.spec["terminationGracePeriodSeconds"])
	_, err = engineOut(t, "stop", "--time", grace, name)
	require.NoError(t, err)
	code, err := engineOut(t, "inspect", "--format", "{{.State.ExitCode}}", name)
	require.NoError(t, err)
	assert.Equal(t, "0", code, "exit status after SIGTERM")
}

// startContainer runs the agent's image detached; the container is removed when the test
// ends, its output shown first if the test failed.
func startContainer(t *testing.T, name, image string, run imageRun) {
	t.Helper()
	args := append([]string{"run", "--detach", "--name", name}, run.flags...)
	args = append(append(args, image), run.args...)
	_, err := engineOut(t, args...)
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := engineCmd(t, "logs", name).CombinedOutput()
			t.Logf("container %s output:\n%s", name, logs)
		}
		_, _ = engineOut(t, "rm", "--force", name)
	})
}

// waitReady asks the readiness health_check at addr as the probe does until it answers 200,
// the container stops, or the time is up. It connects only once the port is listening: a
// connect to a loopback port nobody listens on can take that very port as its own source
// (a TCP self-connect) and keep the collector from binding it.
func waitReady(t *testing.T, name, addr string, within time.Duration) error {
	t.Helper()
	url := "http://" + addr + "/health/status"
	deadline := time.Now().Add(within)
	for ; time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if running, err := engineOut(t, "inspect", "--format", "{{.State.Running}}", name); err != nil || running != "true" {
			return fmt.Errorf("container %s stopped before GET %s answered 200 (running: %q, %v)", name, url, running, err)
		}
		if !listening(t, addr) {
			continue
		}
		resp, err := http.Get(url) //nolint:noctx // a probe
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	return fmt.Errorf("GET %s did not answer 200 within %v", url, within)
}

// listening reports whether a socket of this network namespace (the container's, with host
// networking) listens on the IPv4 address addr, from /proc/net/tcp.
func listening(t *testing.T, addr string) bool {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	require.NoError(t, err)
	ip := ap.Addr().As4()
	// /proc/net/tcp: "sl local_address rem_address st ...", the address as the 32-bit word
	// in host (little-endian) order, the port big-endian; state 0A is LISTEN.
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], ap.Port())
	b, err := os.ReadFile("/proc/net/tcp")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && f[3] == "0A" && (f[1] == want || f[1] == "00000000"+want[8:]) {
			return true
		}
	}
	return false
}

func toAny(m map[string]int) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

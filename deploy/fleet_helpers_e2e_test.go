//go:build e2e

package deploy_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the shipped exporters compress with gzip
	"google.golang.org/grpc/metadata"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// The fleet tests run the shipped agent and gateway configurations as they are, on loopback:
// each volume the pod mounts becomes a temp directory holding what the Secret or volume would,
// and only the listen addresses (pod IP, fixed ports) are moved to free loopback ports.

// gatewayDNS is the name the agents dial (OTELCOL_GATEWAY_ENDPOINT in the DaemonSet) and the
// gateway's certificate carries (cert-manager/certificates.yaml).
const gatewayDNS = "otelcol-gpumem-gateway.otelcol-gpumem.svc"

// pki is a test CA with one serving certificate for loopback and the gateway's DNS name.
type pki struct {
	caPEM, certPEM, keyPEM []byte
	pool                   *x509.CertPool
}

func newPKI(t *testing.T) pki {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "otelcol-gpumem test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: gatewayDNS},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{gatewayDNS, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	p := pki{
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pool:    x509.NewCertPool(),
	}
	p.pool.AddCert(caCert)
	return p
}

// writeTLSSecret fills dir as the kubelet fills a mounted kubernetes.io/tls Secret.
func (p pki) writeTLSSecret(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	for name, data := range map[string][]byte{"ca.crt": p.caPEM, "tls.crt": p.certPEM, "tls.key": p.keyPEM} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
}

func (p pki) serverTLS(t *testing.T) *tls.Config {
	t.Helper()
	cert, err := tls.X509KeyPair(p.certPEM, p.keyPEM)
	require.NoError(t, err)
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
}

// mountDirs gives each of the pod's volume mounts (but the config's own) a temp directory:
// the shipped configuration's paths are rewritten into them.
func mountDirs(t *testing.T, p pod, root string) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, m := range maps(listAt(p.container, "volumeMounts")) {
		mp := str(m, "mountPath")
		if mp == "/conf" {
			continue
		}
		dirs[mp] = filepath.Join(root, str(m, "name"))
		require.NoError(t, os.MkdirAll(dirs[mp], 0o700))
	}
	return dirs
}

// rewritePaths replaces every string value under a mount path with the same path under its
// temp directory.
func rewritePaths(v any, dirs map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = rewritePaths(e, dirs)
		}
	case []any:
		for i, e := range x {
			x[i] = rewritePaths(e, dirs)
		}
	case string:
		for mp, d := range dirs {
			if under(x, mp) {
				return d + strings.TrimPrefix(x, mp)
			}
		}
	}
	return v
}

// deepCopy returns an independent copy of a parsed configuration (the pods' configs are
// shared by the manifest helpers).
func deepCopy(t *testing.T, cfg map[string]any) map[string]any {
	t.Helper()
	return parseConfig(t, mustYAML(t, cfg))
}

// quietTelemetry keeps the collector's own metrics server off: tests run in parallel and its
// default port is fixed.
func quietTelemetry(cfg map[string]any) {
	svc := mapAt(cfg, "service")
	svc["telemetry"] = map[string]any{"metrics": map[string]any{"level": "none"}}
}

// moveHealthChecks gives every health_check extension (v1: endpoint, v2: http.endpoint) a
// free loopback port and returns the first one's address.
func moveHealthChecks(t *testing.T, cfg map[string]any) string {
	t.Helper()
	var ids []string
	for _, id := range sortedKeys(mapAt(cfg, "extensions")) {
		if typeOf(id) == "health_check" {
			ids = append(ids, id)
		}
	}
	addrs := e2eharness.FreeAddrs(t, len(ids))
	for i, id := range ids {
		ext := mapAt(cfg, "extensions", id)
		if http := mapAt(ext, "http"); http != nil {
			http["endpoint"] = addrs[i]
		} else {
			ext["endpoint"] = addrs[i]
		}
	}
	if len(addrs) == 0 {
		return ""
	}
	return addrs[0]
}

// podArgs are the container's arguments but --config (feature gates, for one).
func podArgs(p pod) []string {
	var out []string
	for _, a := range strs(p.container, "args") {
		if !strings.HasPrefix(a, "--config") {
			out = append(out, a)
		}
	}
	return out
}

// startConfig writes cfg and starts the binary on it with the pod's other arguments.
func startConfig(t *testing.T, name string, cfg map[string]any, env []string, args ...string) *e2eharness.Process {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	text, err := yaml.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, text, 0o600))
	p := e2eharness.NewProcess(t, name, env, append([]string{e2eharness.Binary(t), "--config", path}, args...)...)
	p.Start()
	return p
}

// backend is the OTLP/gRPC endpoint the gateway exports to (TLS, as the shipped exporter
// expects): it keeps every record body and every resource's host.name it received.
type backend struct {
	plogotlp.UnimplementedGRPCServer
	mu     sync.Mutex
	bodies map[string]int // log record body → times received
	hosts  map[string]int // host.name of metric resources → data points received
	logs   []plog.Logs
}

func newBackend() *backend {
	return &backend{bodies: map[string]int{}, hosts: map[string]int{}}
}

func (b *backend) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ld := plog.NewLogs()
	req.Logs().CopyTo(ld)
	b.logs = append(b.logs, ld)
	for _, r := range allRecords(ld) {
		b.bodies[r.Body().AsString()]++
	}
	return plogotlp.NewExportResponse(), nil
}

type metricsService struct {
	pmetricotlp.UnimplementedGRPCServer
	b *backend
}

func (m *metricsService) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	m.b.mu.Lock()
	defer m.b.mu.Unlock()
	rms := req.Metrics().ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		one := pmetric.NewMetrics()
		rms.At(i).CopyTo(one.ResourceMetrics().AppendEmpty())
		host, _ := rms.At(i).Resource().Attributes().Get("host.name")
		m.b.hosts[host.AsString()] += one.DataPointCount()
	}
	return pmetricotlp.NewExportResponse(), nil
}

// serve starts the backend on addr with TLS; the returned func stops it.
func (b *backend) serve(t *testing.T, addr string, creds *tls.Config) func() {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(creds)))
	plogotlp.RegisterGRPCServer(s, b)
	pmetricotlp.RegisterGRPCServer(s, &metricsService{b: b})
	go func() { _ = s.Serve(l) }()
	var once sync.Once
	stop := func() { once.Do(s.Stop) }
	t.Cleanup(stop)
	return stop
}

func (b *backend) count(body string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bodies[body]
}

func (b *backend) snapshot() (bodies, hosts map[string]int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bodies, hosts = map[string]int{}, map[string]int{}
	for k, v := range b.bodies {
		bodies[k] = v
	}
	for k, v := range b.hosts {
		hosts[k] = v
	}
	return bodies, hosts
}

// recordWith returns the first received log record whose body contains s.
func (b *backend) recordWith(s string) (plog.LogRecord, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ld := range b.logs {
		for _, r := range allRecords(ld) {
			if strings.Contains(r.Body().AsString(), s) {
				return r, true
			}
		}
	}
	return plog.LogRecord{}, false
}

func allRecords(ld plog.Logs) []plog.LogRecord {
	var out []plog.LogRecord
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				out = append(out, lrs.At(k))
			}
		}
	}
	return out
}

// sender is an OTLP/gRPC client with the credentials a test gives it.
type sender struct {
	conn  *grpc.ClientConn
	token string
}

// dial connects to addr: with TLS verified against pool (nil: plaintext) and, when token is
// set, the bearer token the gateway's bearertokenauth extension expects.
func dial(t *testing.T, addr string, pool *x509.CertPool, token string) *sender {
	t.Helper()
	creds := insecure.NewCredentials()
	if pool != nil {
		creds = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: gatewayDNS, MinVersion: tls.VersionTLS13})
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return &sender{conn: conn, token: token}
}

func (s *sender) ctx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if s.token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.token)
	}
	return ctx, cancel
}

func (s *sender) sendLogs(ld plog.Logs) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := plogotlp.NewGRPCClient(s.conn).Export(ctx, plogotlp.NewExportRequestFromLogs(ld))
	return err
}

func (s *sender) sendMetrics(md pmetric.Metrics) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := pmetricotlp.NewGRPCClient(s.conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
	return err
}

// logsOf builds one resource (host.name = host) with a record per body, stamped now.
func logsOf(host string, bodies ...string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("host.name", host)
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for _, b := range bodies {
		r := lrs.AppendEmpty()
		r.SetTimestamp(pcommonNow())
		r.Body().SetStr(b)
	}
	return ld
}

// gpuMetricsOf is one GPU's memory usage on host, as an agent's gpu_mem would send it.
func gpuMetricsOf(host string, used int64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("host.name", host)
	rm.Resource().Attributes().PutStr("hw.id", "GPU-forged-0")
	rm.Resource().Attributes().PutInt("nvidia.gpu.index", 0)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("hw.gpu.memory.usage")
	m.SetUnit("By")
	dp := m.SetEmptySum().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommonNow())
	dp.SetIntValue(used)
	return md
}

func pcommonNow() pcommon.Timestamp { return pcommon.NewTimestampFromTime(time.Now()) }

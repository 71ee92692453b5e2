//go:build e2e

package deploy_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// TestBenchFleet is the gateway's sizing measurement, not a check: it runs only with
// BENCH_FLEET=1 (make bench-fleet). It records one simulated agent of the built-in scenario
// for a few seconds through the shipped agent config, then replays it as BENCH_HOSTS nodes
// (host.name node-0000..., timestamps one second apart) for BENCH_SECONDS rounds, from 8
// connections as fast as the gateway answers, into the shipped gateway three times: as
// shipped (memory_limiter, oom_classifier), without oom_classifier, and with contrib's stock
// resource processor in its place. It prints the gateway's CPU per million points (utime +
// stime of the process) and the points per second it sustained, and fails only if a run
// evicted a GPU from the classifier's window (deploy/README.md, "Sizing per 1,000 GPUs").
func TestBenchFleet(t *testing.T) {
	if os.Getenv("BENCH_FLEET") == "" {
		t.Skip("a measurement: BENCH_FLEET=1 (make bench-fleet)")
	}
	hosts := envInt(t, "BENCH_HOSTS", 1000)
	rounds := envInt(t, "BENCH_SECONDS", 20)
	pk := newPKI(t)
	node := recordAgent(t, pk)
	points := 0
	for _, md := range node {
		points += md.DataPointCount()
	}
	devices := map[string]bool{}
	for _, md := range node {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			if id, ok := md.ResourceMetrics().At(i).Resource().Attributes().Get("hw.id"); ok {
				devices[id.Str()] = true
			}
		}
	}
	t.Logf("one node: %d points a second, %d windowed devices", points, len(devices))

	variants := []struct {
		name string
		edit func(cfg map[string]any)
	}{
		{"shipped (memory_limiter, oom_classifier)", nil},
		{"without oom_classifier", func(cfg map[string]any) { setProcessors(cfg, "memory_limiter") }},
		{"stock resource processor instead", func(cfg map[string]any) {
			mapAt(cfg, "processors")["resource"] = map[string]any{
				"attributes": []any{map[string]any{"key": "deployment.environment.name", "value": "bench", "action": "upsert"}}}
			setProcessors(cfg, "memory_limiter", "resource")
		}},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%d hosts × %d points/s (%d devices each), %d s replayed, 8 connections:\n", hosts, points, len(devices), rounds)
	fmt.Fprintf(&report, "| gateway | CPU s per million points | points/s sustained | wall |\n|---|---|---|---|\n")
	for _, v := range variants {
		sink := &countingSink{}
		backendAddr := e2eharness.FreeAddr(t)
		sink.serve(t, backendAddr, pk.serverTLS(t))
		gw := startGatewayEdited(t, pk, backendAddr, v.edit)
		pid := gw.proc.Pid()
		sent, wall, cpu := replayFleet(t, pk, gw.grpcAddr, node, hosts, rounds, pid)
		require.NotContains(t, gw.proc.Output(), "Metric window full", "%s: the window evicted a GPU", v.name)
		fmt.Fprintf(&report, "| %s | %.2f | %.0f | %v |\n", v.name, cpu.Seconds()/(float64(sent)/1e6), float64(sent)/wall.Seconds(), wall.Round(100*time.Millisecond))
		gw.proc.Stop(15)
	}
	t.Log(report.String())
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, name)
	return n
}

// setProcessors sets both pipelines' processors.
func setProcessors(cfg map[string]any, ps ...string) {
	list := make([]any, len(ps))
	for i, p := range ps {
		list[i] = p
	}
	for _, name := range []string{"metrics", "logs"} {
		mapAt(cfg, "service", "pipelines", name)["processors"] = list
	}
}

// recordAgent runs the shipped agent on the simulated backend against a recording endpoint
// and returns one second of its metrics: the requests of its fourth to sixth seconds, each
// point's timestamp kept, grouped by second.
func recordAgent(t *testing.T, pk pki) []pmetric.Metrics {
	t.Helper()
	rec := &recorder{}
	addr := e2eharness.FreeAddr(t)
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(pk.serverTLS(t))))
	pmetricotlp.RegisterGRPCServer(s, rec)
	go func() { _ = s.Serve(l) }()
	defer s.Stop()
	startAgent(t, pk, addr)
	eventually(t, 60*time.Second, "six seconds of the agent's metrics", func() bool { return rec.seconds() >= 6 })
	return rec.second(4)
}

type recorder struct {
	pmetricotlp.UnimplementedGRPCServer
	mu  sync.Mutex
	got []pmetric.Metrics
}

func (r *recorder) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	md := pmetric.NewMetrics()
	req.Metrics().CopyTo(md)
	r.mu.Lock()
	r.got = append(r.got, md)
	r.mu.Unlock()
	return pmetricotlp.NewExportResponse(), nil
}

// stamps are the distinct seconds of the recorded points, in order.
func (r *recorder) stamps() []int64 {
	seen := map[int64]bool{}
	for _, md := range r.got {
		eachPoint(md, func(ts pcommon.Timestamp) pcommon.Timestamp { seen[int64(ts)/1e9] = true; return ts })
	}
	var out []int64
	for s := range seen {
		out = append(out, s)
	}
	for i := range out { // a few seconds: insertion sort
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (r *recorder) seconds() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.stamps())
}

// second returns the resources of the n-th recorded second, one Metrics per request.
func (r *recorder) second(n int) []pmetric.Metrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	want := r.stamps()[n]
	var out []pmetric.Metrics
	for _, md := range r.got {
		one := pmetric.NewMetrics()
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			in := false
			m := pmetric.NewMetrics()
			rms.At(i).CopyTo(m.ResourceMetrics().AppendEmpty())
			eachPoint(m, func(ts pcommon.Timestamp) pcommon.Timestamp { in = in || int64(ts)/1e9 == want; return ts })
			if in {
				rms.At(i).CopyTo(one.ResourceMetrics().AppendEmpty())
			}
		}
		if one.ResourceMetrics().Len() > 0 {
			out = append(out, one)
		}
	}
	return out
}

// eachPoint calls f on every number point's timestamp (gauges and sums: all gpu_mem emits)
// and stores what it returns.
func eachPoint(md pmetric.Metrics, f func(pcommon.Timestamp) pcommon.Timestamp) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				var dps pmetric.NumberDataPointSlice
				switch m := ms.At(k); m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				default:
					continue
				}
				for l := 0; l < dps.Len(); l++ {
					dps.At(l).SetTimestamp(f(dps.At(l).Timestamp()))
				}
			}
		}
	}
}

// replayFleet sends the node's second as hosts nodes for rounds seconds of data, each round
// one second later, and returns the points the gateway accepted, the wall time and the
// gateway's CPU time over the replay.
func replayFleet(t *testing.T, pk pki, addr string, node []pmetric.Metrics, hosts, rounds, pid int) (int64, time.Duration, time.Duration) {
	t.Helper()
	creds := credentials.NewTLS(&tls.Config{RootCAs: pk.pool, ServerName: gatewayDNS, MinVersion: tls.VersionTLS13})
	const conns = 8
	clients := make([]pmetricotlp.GRPCClient, conns)
	for i := range clients {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		clients[i] = pmetricotlp.NewGRPCClient(c)
	}
	// One request per host and round: the node's second with its host.name and timestamps.
	base := time.Now().Add(-time.Duration(rounds) * time.Second).UnixNano()
	var first int64 = -1
	eachPoint(node[0], func(ts pcommon.Timestamp) pcommon.Timestamp {
		if first < 0 {
			first = int64(ts)
		}
		return ts
	})
	type job struct{ host, round int }
	jobs := make(chan job, 1024)
	var sent atomic.Int64
	var wg sync.WaitGroup
	cpu0 := procCPU(t, pid)
	start := time.Now()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				one := pmetric.NewMetrics() // a copy: node is shared by the senders
				for _, part := range node {
					rms := part.ResourceMetrics()
					for i := 0; i < rms.Len(); i++ {
						rms.At(i).CopyTo(one.ResourceMetrics().AppendEmpty())
					}
				}
				rms := one.ResourceMetrics()
				host := fmt.Sprintf("node-%04d", j.host)
				for i := 0; i < rms.Len(); i++ {
					rms.At(i).Resource().Attributes().PutStr("host.name", host)
				}
				shift := base + int64(j.round)*1e9 - first
				eachPoint(one, func(ts pcommon.Timestamp) pcommon.Timestamp { return pcommon.Timestamp(int64(ts) + shift) })
				ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+goodToken), 30*time.Second)
				if _, err := clients[c].Export(ctx, pmetricotlp.NewExportRequestFromMetrics(one)); err == nil {
					sent.Add(int64(one.DataPointCount()))
				}
				cancel()
			}
		}()
	}
	for r := range rounds {
		for h := range hosts {
			jobs <- job{h, r}
		}
	}
	close(jobs)
	wg.Wait()
	return sent.Load(), time.Since(start), procCPU(t, pid) - cpu0
}

// procCPU is the process's user + system time (/proc/<pid>/stat, fields 14 and 15, in clock
// ticks of 1/100 s on Linux).
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, err := strconv.ParseInt(f[11], 10, 64)
	require.NoError(t, err)
	stime, err := strconv.ParseInt(f[12], 10, 64)
	require.NoError(t, err)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// countingSink is a backend that accepts and drops metrics.
type countingSink struct {
	pmetricotlp.UnimplementedGRPCServer
	points atomic.Int64
}

func (s *countingSink) Export(_ context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	s.points.Add(int64(req.Metrics().DataPointCount()))
	return pmetricotlp.NewExportResponse(), nil
}

func (s *countingSink) serve(t *testing.T, addr string, creds *tls.Config) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(creds)))
	pmetricotlp.RegisterGRPCServer(srv, s)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
}

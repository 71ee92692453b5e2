//go:build e2e

package deploy_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// floodCeiling is what an unauthenticated flood may cost the gateway:
// the growth of its resident set over the idle gateway's, at its peak (VmHWM).
const floodCeiling = 128 << 20

// procKiB reads a field (VmRSS, VmHWM) of /proc/<pid>/status in KiB.
func procKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kib
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestGatewayUnauthenticatedFlood runs the shipped gateway on loopback and floods its gRPC
// port from 4 connections that carry no token, each with 4 requests at a time (the
// gateway's max_concurrent_streams), 15 s or 100 requests a connection, whichever ends first.
// "headers": each request's headers hold 12 MiB (below grpc-go's default 16 MiB header list);
// "bodies": small headers, ~3.6 MiB bodies. Every request is refused and the gateway's peak
// resident set grows by less than floodCeiling in both. Without a header list bound (preauth's
// max_header_list_size) the header flood grew it by 158-205 MiB, without preauth the body
// flood by 208-256 MiB, on a loaded 2-core
// machine (deploy/README.md, "Protecting the gateway").
func TestGatewayUnauthenticatedFlood(t *testing.T) {
	// 12 headers of 1 MiB of random letters (no HPACK table can index them).
	var big []string
	for i := 0; i < 12; i++ {
		v := make([]byte, 1<<20)
		for j := range v {
			v[j] = byte('a' + rand.IntN(26))
		}
		big = append(big, fmt.Sprintf("x-flood-%d", i), string(v))
	}
	t.Run("headers", func(t *testing.T) {
		growth := floodGateway(t, big, plogotlp.NewExportRequestFromLogs(logsOf("flood-node", "refused")))
		assert.Less(t, growth, int64(floodCeiling), "an unauthenticated flood costs the gateway less than %d MiB", floodCeiling>>20)
	})
	// Small headers, bodies just under max_recv_msg_size_mib (4 MiB): grpc-go reads and
	// decodes a unary request before the interceptors, i.e. before the receiver's auth checks
	// the token. The gateway's preauth middleware checks it from the stream's headers first,
	// so no refused body is read. Without it: +208 to +234 MiB for these 4 connections,
	// growing with their number (deploy/README.md, "Protecting the gateway").
	bodies := make([]string, 30000)
	for i := range bodies {
		bodies[i] = strings.Repeat("b", 100)
	}
	t.Run("bodies", func(t *testing.T) {
		growth := floodGateway(t, nil, plogotlp.NewExportRequestFromLogs(logsOf("flood-node", bodies...)))
		t.Logf("bodies: growth %d MiB", growth>>20)
		assert.Less(t, growth, int64(floodCeiling), "an unauthenticated body flood costs the gateway less than %d MiB", floodCeiling>>20)
	})
}

// floodGateway starts the shipped gateway and floods it with req and the metadata md, no
// token, from 4 connections of 4 streams each, and returns the growth of the gateway's peak
// resident set (VmHWM) over its idle resident set, in bytes. No request may be accepted, and
// afterwards an agent's request goes through.
func floodGateway(t *testing.T, md []string, req plogotlp.ExportRequest) int64 {
	pk := newPKI(t)
	gw := startGateway(t, pk, e2eharness.FreeAddr(t))
	pid := gw.proc.Pid()
	time.Sleep(2 * time.Second) // let start-up settle (compaction, first GC)
	idle := procKiB(t, pid, "VmRSS")

	const conns, streams, perConn = 4, 4, 100
	creds := credentials.NewTLS(&tls.Config{RootCAs: pk.pool, ServerName: gatewayDNS, MinVersion: tls.VersionTLS13})

	var mu sync.Mutex
	codesSeen := map[codes.Code]int{} // OK: accepted
	deadline := time.Now().Add(15 * time.Second)
	var wg sync.WaitGroup
	for c := 0; c < conns; c++ {
		conn, err := grpc.NewClient(gw.grpcAddr, grpc.WithTransportCredentials(creds))
		require.NoError(t, err)
		defer conn.Close()
		client := plogotlp.NewGRPCClient(conn)
		var n atomic.Int64
		for s := 0; s < streams; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n.Add(1) <= perConn && time.Now().Before(deadline) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					if len(md) > 0 {
						ctx = metadata.AppendToOutgoingContext(ctx, md...)
					}
					_, err := client.Export(ctx, req)
					cancel()
					mu.Lock()
					codesSeen[status.Code(err)]++
					mu.Unlock()
				}
			}()
		}
	}

	// The peak is read from VmHWM; sampling VmRSS only shows the course in the log.
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var peakRSS int64
	start := time.Now()
	for sampling := true; sampling; {
		select {
		case <-done:
			sampling = false
		case <-time.After(250 * time.Millisecond):
		}
		peakRSS = max(peakRSS, procKiB(t, pid, "VmRSS"))
	}
	hwm := procKiB(t, pid, "VmHWM")
	growth := (hwm - idle) << 10
	sent := 0
	for _, n := range codesSeen {
		sent += n
	}
	t.Logf("flood: %d requests in %v, answers %v; gateway RSS idle %d MiB, peak RSS sampled %d MiB, VmHWM %d MiB, growth %d MiB",
		sent, time.Since(start).Round(100*time.Millisecond), codesSeen,
		idle>>10, peakRSS>>10, hwm>>10, growth>>20)

	assert.Positive(t, sent)
	// Refused as Unauthenticated (no token) or, with the 8 KiB header limit, by the
	// connection being closed (Unavailable) or the stream reset (Internal): never accepted.
	assert.Zero(t, codesSeen[codes.OK], "no unauthenticated request is accepted")
	// The gateway still serves: an agent's request goes through.
	s := dial(t, gw.grpcAddr, pk.pool, goodToken)
	require.NoError(t, s.sendLogs(logsOf("flood-node", "after the flood")))
	return growth
}

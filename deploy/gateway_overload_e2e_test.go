//go:build e2e

package deploy_test

import (
	"context"
	"crypto/tls"
	"os"
	"strings"
	"sync"
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

// TestGatewayAuthenticatedOverload runs the shipped gateway on loopback and overloads it with
// senders that hold the token: 16 TLS connections, 4 requests at a time on each (the
// gateway's max_concurrent_streams), ~3.6 MiB bodies, for 15 s, the backend down (the data
// goes to the disk queue). preauth's max_in_flight_requests admits 16 requests at a time and
// refuses the rest as Unavailable before reading them; the senders would retry. The gateway's
// peak resident set (VmHWM) stays under memory_limiter's hard limit of the manifest's memory
// limit (GOMEMLIMIT's level): measured 881-1166 MiB of the 2458 MiB allowed, where the bound
// off reached 2588-2600 MiB, past it.
// GATEWAY_OVERLOAD_UNBOUNDED=1 runs it again with the bound off, for the comparison
// (deploy/README.md, "Protecting the gateway").
func TestGatewayAuthenticatedOverload(t *testing.T) {
	p := gatewayPod(t)
	limit, err := bytesOf(str(p.container, "resources", "limits", "memory"))
	require.NoError(t, err)
	ml := mapAt(p.config, "processors", "memory_limiter")
	hard, _ := ml["limit_percentage"].(int)
	require.Positive(t, hard)
	hardLimit := limit * int64(hard) / 100

	bodies := make([]string, 30000)
	for i := range bodies {
		bodies[i] = strings.Repeat("b", 100)
	}
	req := plogotlp.NewExportRequestFromLogs(logsOf("overload-node", bodies...))

	t.Run("shipped", func(t *testing.T) {
		hwm, seen := overloadGateway(t, nil, req)
		assert.Less(t, hwm, hardLimit, "peak resident set under memory_limiter's hard limit (%d MiB of %d MiB)", hardLimit>>20, limit>>20)
		assert.Positive(t, seen[codes.OK], "admitted requests are served")
		assert.Positive(t, seen[codes.Unavailable], "requests beyond the bound are refused retryably")
		for c := range seen {
			assert.Contains(t, []codes.Code{codes.OK, codes.Unavailable, codes.DeadlineExceeded}, c, "only served, refused to retry, or slow")
		}
	})
	if os.Getenv("GATEWAY_OVERLOAD_UNBOUNDED") == "" {
		return
	}
	t.Run("unbounded", func(t *testing.T) {
		overloadGateway(t, func(cfg map[string]any) {
			mapAt(cfg, "extensions", "preauth")["max_in_flight_requests"] = 0
		}, req)
	})
}

// overloadGateway starts the gateway (edited by edit) and sends req with the agents' token
// from 16 connections × 4 streams for 15 s; it returns the gateway's VmHWM in bytes and the
// answers by code.
func overloadGateway(t *testing.T, edit func(map[string]any), req plogotlp.ExportRequest) (int64, map[codes.Code]int) {
	pk := newPKI(t)
	gw := startGatewayEdited(t, pk, e2eharness.FreeAddr(t), edit)
	pid := gw.proc.Pid()
	time.Sleep(2 * time.Second) // let start-up settle (compaction, first GC)
	idle := procKiB(t, pid, "VmRSS")

	const conns, streams = 16, 4
	creds := credentials.NewTLS(&tls.Config{RootCAs: pk.pool, ServerName: gatewayDNS, MinVersion: tls.VersionTLS13})
	var mu sync.Mutex
	seen := map[codes.Code]int{}
	deadline := time.Now().Add(15 * time.Second)
	var wg sync.WaitGroup
	for range conns {
		conn, err := grpc.NewClient(gw.grpcAddr, grpc.WithTransportCredentials(creds))
		require.NoError(t, err)
		defer conn.Close()
		client := plogotlp.NewGRPCClient(conn)
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+goodToken), 20*time.Second)
					_, err := client.Export(ctx, req)
					cancel()
					mu.Lock()
					seen[status.Code(err)]++
					mu.Unlock()
					if status.Code(err) == codes.Unavailable {
						time.Sleep(50 * time.Millisecond) // an exporter backs off before it retries
					}
				}
			}()
		}
	}
	wg.Wait()
	hwm := procKiB(t, pid, "VmHWM") << 10
	t.Logf("overload: answers %v; gateway RSS idle %d MiB, VmHWM %d MiB", seen, idle>>10, hwm>>20)
	// The gateway still serves: an agent's request goes through.
	s := dial(t, gw.grpcAddr, pk.pool, goodToken)
	require.NoError(t, s.sendLogs(logsOf("overload-node", "after the overload")))
	return hwm, seen
}

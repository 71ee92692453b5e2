//go:build e2e

package deploy_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// closedAfter reads from c until the peer closes it (or limit passes) and returns how long
// that took; ok is false when c was still open at limit.
func closedAfter(c net.Conn, start time.Time, limit time.Duration) (time.Duration, bool) {
	_ = c.SetReadDeadline(start.Add(limit))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return time.Since(start), false
			}
			return time.Since(start), true // EOF or reset: closed by the gateway
		}
	}
}

// TestGatewayClosesHalfOpenConnections runs the shipped gateway on loopback and opens, at
// once, the connections a sender that never completes a request leaves behind: HTTP headers
// dribbled one byte a second, an HTTP TLS handshake stopped after the record header, a gRPC
// connection that never sends a request, a gRPC TLS handshake stopped after the record header.
// Each is closed by the gateway within halfOpenLimit (the shipped values: 10 s, 10 s, 30 s, and
// preauth's handshake_timeout of 10 s; without it grpc-go waits 120 s).
func TestGatewayClosesHalfOpenConnections(t *testing.T) {
	t.Parallel()
	pk := newPKI(t)
	gw := startGateway(t, pk, e2eharness.FreeAddr(t))
	limit := halfOpenLimit + 5*time.Second // the slack of a loaded machine
	clientTLS := func(proto string) *tls.Config {
		return &tls.Config{RootCAs: pk.pool, ServerName: gatewayDNS, MinVersion: tls.VersionTLS13, NextProtos: []string{proto}}
	}

	var wg sync.WaitGroup
	run := func(name string, f func() (time.Duration, bool)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, closed := f()
			t.Logf("%s: closed=%v after %v", name, closed, d.Round(100*time.Millisecond))
			assert.True(t, closed, "%s: still open after %v", name, limit)
			assert.Less(t, d, limit, name)
		}()
	}

	run("http headers dribbled", func() (time.Duration, bool) {
		c, err := tls.Dial("tcp", gw.httpAddr, clientTLS("http/1.1"))
		if !assert.NoError(t, err) {
			return 0, false
		}
		defer c.Close()
		start := time.Now()
		go func() { // one byte a second, never the blank line that ends the headers
			msg := "POST /v1/logs HTTP/1.1\r\nHost: gateway\r\nX-Slow: " + strings.Repeat("x", 60)
			for i := 0; i < len(msg); i++ {
				if _, err := c.Write([]byte{msg[i]}); err != nil {
					return
				}
				time.Sleep(time.Second)
			}
		}()
		return closedAfter(c, start, limit)
	})
	run("http TLS handshake stopped", func() (time.Duration, bool) {
		c, err := net.Dial("tcp", gw.httpAddr)
		if !assert.NoError(t, err) {
			return 0, false
		}
		defer c.Close()
		start := time.Now()
		_, err = c.Write([]byte{0x16, 0x03, 0x01, 0x01, 0x00}) // a handshake record of 256 bytes, never sent
		assert.NoError(t, err)
		return closedAfter(c, start, limit)
	})
	run("grpc connection without a request", func() (time.Duration, bool) {
		conn, err := grpc.NewClient(gw.grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(clientTLS("h2"))))
		if !assert.NoError(t, err) {
			return 0, false
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		conn.Connect()
		for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
			if !conn.WaitForStateChange(ctx, s) {
				return limit, false
			}
		}
		start := time.Now() // established (TLS, HTTP/2 settings); no request, no token
		if !conn.WaitForStateChange(ctx, connectivity.Ready) {
			return time.Since(start), false
		}
		return time.Since(start), true // the gateway sent GOAWAY: the client leaves READY
	})

	run("grpc TLS handshake stopped", func() (time.Duration, bool) {
		c, err := net.Dial("tcp", gw.grpcAddr)
		if !assert.NoError(t, err) {
			return 0, false
		}
		defer c.Close()
		start := time.Now()
		_, err = c.Write([]byte{0x16, 0x03, 0x01, 0x01, 0x00})
		assert.NoError(t, err)
		return closedAfter(c, start, limit)
	})
	wg.Wait()

	// The gateway still serves: an agent's request goes through.
	s := dial(t, gw.grpcAddr, pk.pool, goodToken)
	require.NoError(t, s.sendLogs(logsOf("bounds-node", "after the half-open connections")))
}

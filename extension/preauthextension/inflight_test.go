package preauthextension

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// blockingLogs holds every Export until release is closed, counting those it holds.
type blockingLogs struct {
	plogotlp.UnimplementedGRPCServer
	held    atomic.Int64
	release chan struct{}
}

func (s *blockingLogs) Export(context.Context, plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	s.held.Add(1)
	<-s.release
	return plogotlp.NewExportResponse(), nil
}

// serveBlocking starts a configgrpc server with preauth (max_in_flight_requests limit) whose
// Export blocks, and returns its address, the service and the payload counter.
func serveBlocking(t *testing.T, limit int, logger *zap.Logger) (string, *blockingLogs, *payloads) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Authenticator, cfg.MaxInFlightRequests = authID, limit
	exts := map[component.ID]component.Component{authID: tokenAuth{}}
	p := newPreauth(cfg, logger)
	require.NoError(t, p.Start(context.Background(), host{ext: exts}))
	exts[preauthID] = p
	sc := configgrpc.NewDefaultServerConfig()
	sc.NetAddr = confignet.AddrConfig{Endpoint: "127.0.0.1:0", Transport: confignet.TransportTypeTCP}
	sc.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	sc.Middlewares = []configmiddleware.Config{{ID: preauthID}}
	pl := &payloads{}
	srv, err := sc.ToServer(context.Background(), exts, componenttest.NewNopTelemetrySettings(),
		configgrpc.WithGrpcServerOption(grpc.StatsHandler(pl)))
	require.NoError(t, err)
	ls := &blockingLogs{release: make(chan struct{})}
	plogotlp.RegisterGRPCServer(srv, ls)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), ls, pl
}

// Requests beyond max_in_flight_requests, over any number of connections, are refused with
// Unavailable (which the OTLP exporters retry) before their bodies are read, with one WARN;
// once the held ones are answered their slots are free again. Without the bound all are read.
func TestMaxInFlightGRPC(t *testing.T) {
	for _, limit := range []int{3, 0} {
		core, logs := observer.New(zap.InfoLevel)
		addr, ls, pl := serveBlocking(t, limit, zap.New(core))
		const senders = 6 // one connection each
		errs := make(chan error, senders)
		conns := make([]*grpc.ClientConn, senders)
		for i := range conns {
			c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			require.NoError(t, err)
			conns[i] = c
			go func() {
				ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer good"), 20*time.Second)
				defer cancel()
				_, err := plogotlp.NewGRPCClient(c).Export(ctx, bigRequest())
				errs <- err
			}()
		}
		want := int64(senders)
		if limit > 0 {
			want = int64(limit)
			for range senders - limit {
				err := <-errs
				assert.Equal(t, codes.Unavailable, status.Code(err), "limit %d: %v", limit, err)
			}
		}
		require.Eventually(t, func() bool { return ls.held.Load() == want }, 10*time.Second, 10*time.Millisecond)
		assert.Equal(t, want, pl.n.Load(), "limit %d: only the admitted requests are read", limit)
		close(ls.release)
		for range want {
			require.NoError(t, <-errs)
		}
		if limit > 0 {
			assert.Equal(t, 1, logs.FilterMessageSnippet("Refusing requests").Len(), "one line for the episode")
			// The slots are back: as many again are admitted.
			ls.release = make(chan struct{})
			close(ls.release)
			for _, c := range conns[:limit] {
				ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer good")
				_, err := plogotlp.NewGRPCClient(c).Export(ctx, bigRequest())
				require.NoError(t, err)
			}
		}
		for _, c := range conns {
			_ = c.Close()
		}
	}
}

// A refused-for-its-token stream takes no slot: the token check comes first.
func TestUnauthenticatedTakesNoSlot(t *testing.T) {
	addr, ls, _ := serveBlocking(t, 1, zap.NewNop())
	for range 3 {
		assert.Equal(t, codes.Unauthenticated, status.Code(export(t, addr, "wrong")))
	}
	close(ls.release)
	require.NoError(t, export(t, addr, "good"))
}

// The HTTP listener: beyond the bound a 503 with Retry-After, the body left unread; the
// handler's slot is freed when it returns.
func TestMaxInFlightHTTP(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Authenticator, cfg.MaxInFlightRequests = authID, 2
	exts := map[component.ID]component.Component{authID: tokenAuth{}}
	p := newPreauth(cfg, zap.NewNop())
	require.NoError(t, p.Start(context.Background(), host{ext: exts}))
	exts[preauthID] = p
	sc := confighttp.NewDefaultServerConfig()
	sc.NetAddr = confignet.AddrConfig{Endpoint: "127.0.0.1:0", Transport: confignet.TransportTypeTCP}
	sc.Middlewares = []configmiddleware.Config{{ID: preauthID}}
	release := make(chan struct{})
	var held atomic.Int64
	srv, err := sc.ToServer(context.Background(), exts, componenttest.NewNopTelemetrySettings(),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			held.Add(1)
			<-release
			_, _ = io.Copy(io.Discard, r.Body)
		}))
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(srv.Handler)
	ts.Start()
	t.Cleanup(ts.Close)

	var wg sync.WaitGroup
	codesSeen := make(chan int, 5)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(ts.URL+"/v1/logs", "application/x-protobuf", strings.NewReader(strings.Repeat("x", 1<<20)))
			if !assert.NoError(t, err) {
				return
			}
			if resp.StatusCode == http.StatusServiceUnavailable {
				assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			}
			_ = resp.Body.Close()
			codesSeen <- resp.StatusCode
		}()
	}
	for range 3 {
		select {
		case c := <-codesSeen:
			assert.Equal(t, http.StatusServiceUnavailable, c)
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("no 503: every request is being served")
		}
	}
	assert.Equal(t, int64(2), held.Load())
	close(release)
	wg.Wait()
	close(codesSeen)
	for c := range codesSeen {
		assert.Equal(t, http.StatusOK, c)
	}
}

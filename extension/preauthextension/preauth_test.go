package preauthextension

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	authID    = component.MustNewIDWithName("bearertokenauth", "agents")
	preauthID = component.MustNewID("preauth")
)

// tokenAuth stands in for bearertokenauth: "authorization: Bearer good" passes.
type tokenAuth struct {
	component.StartFunc
	component.ShutdownFunc
}

func (tokenAuth) Authenticate(ctx context.Context, h map[string][]string) (context.Context, error) {
	if v := h["authorization"]; len(v) > 0 && v[0] == "Bearer good" {
		return ctx, nil
	}
	return ctx, errors.New("provided authorization does not match expected scheme or token")
}

var _ extensionauth.Server = tokenAuth{}

type host struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

// payloads counts the request messages the server has read and decoded (stats.InPayload):
// grpc-go emits one per message, before any interceptor runs.
type payloads struct{ n atomic.Int64 }

func (p *payloads) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (p *payloads) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (p *payloads) HandleConn(context.Context, stats.ConnStats)                       {}
func (p *payloads) HandleRPC(_ context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.InPayload); ok {
		p.n.Add(1)
	}
}

type logsServer struct {
	plogotlp.UnimplementedGRPCServer
	accepted atomic.Int64
}

func (s *logsServer) Export(context.Context, plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	s.accepted.Add(1)
	return plogotlp.NewExportResponse(), nil
}

// serve starts an OTLP logs server as otlpreceiver builds it (configgrpc, auth by tokenAuth),
// with preauth among its middlewares when withPreauth, and returns its address.
func serve(t *testing.T, cfg *Config, withPreauth bool) (string, *payloads, *logsServer) {
	t.Helper()
	exts := map[component.ID]component.Component{authID: tokenAuth{}}
	if withPreauth {
		p := newPreauth(cfg, zap.NewNop())
		require.NoError(t, p.Start(context.Background(), host{ext: exts}))
		exts[preauthID] = p
	}
	sc := configgrpc.NewDefaultServerConfig()
	sc.NetAddr = confignet.AddrConfig{Endpoint: "127.0.0.1:0", Transport: confignet.TransportTypeTCP}
	sc.Auth = configoptional.Some(configauth.Config{AuthenticatorID: authID})
	if withPreauth {
		sc.Middlewares = []configmiddleware.Config{{ID: preauthID}}
	}
	pl := &payloads{}
	srv, err := sc.ToServer(context.Background(), exts, componenttest.NewNopTelemetrySettings(),
		configgrpc.WithGrpcServerOption(grpc.StatsHandler(pl)))
	require.NoError(t, err)
	ls := &logsServer{}
	plogotlp.RegisterGRPCServer(srv, ls)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), pl, ls
}

func bigRequest() plogotlp.ExportRequest {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := 0; i < 1000; i++ {
		lrs.AppendEmpty().Body().SetStr(strings.Repeat("b", 1000))
	}
	return plogotlp.NewExportRequestFromLogs(ld)
}

func export(t *testing.T, addr, token string) error {
	t.Helper()
	return exportWith(t, addr, token)
}

// exportWith sends bigRequest with the token and the extra header key-value pairs kv.
func exportWith(t *testing.T, addr, token string, kv ...string) error {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	ctx = metadata.AppendToOutgoingContext(ctx, kv...)
	_, err = plogotlp.NewGRPCClient(conn).Export(ctx, bigRequest())
	return err
}

// Without preauth the server reads and decodes every refused request (the receiver's auth
// interceptor runs after that); with it, a refused request is never read, and an accepted
// one is served as before.
func TestRefusedBeforeTheBodyIsRead(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Authenticator = authID
	for _, withPreauth := range []bool{false, true} {
		addr, pl, ls := serve(t, cfg, withPreauth)
		for _, token := range []string{"", "wrong"} {
			err := export(t, addr, token)
			assert.Equal(t, codes.Unauthenticated, status.Code(err), "preauth %v, token %q: %v", withPreauth, token, err)
		}
		if withPreauth {
			assert.Zero(t, pl.n.Load(), "with preauth no refused request is read")
		} else {
			assert.Equal(t, int64(2), pl.n.Load(), "without preauth both refused requests are read: the test sees the difference")
		}
		assert.Zero(t, ls.accepted.Load())
		require.NoError(t, export(t, addr, "good"), "preauth %v", withPreauth)
		assert.Equal(t, int64(1), ls.accepted.Load())
	}
}

// A connection that never completes its handshake (here: no HTTP/2 preface) is closed after
// handshake_timeout; without preauth grpc-go waits 120 s.
func TestHandshakeTimeout(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Authenticator = authID
	cfg.HandshakeTimeout = 300 * time.Millisecond
	for _, withPreauth := range []bool{false, true} {
		addr, _, _ := serve(t, cfg, withPreauth)
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		start := time.Now()
		_, err = c.Write([]byte("PRI * HTTP/2.0\r\n")) // half a preface
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(start.Add(3*time.Second)))
		buf := make([]byte, 4096)
		for err == nil { // the server's SETTINGS, then EOF when it closes, or our deadline
			_, err = c.Read(buf)
		}
		var ne net.Error
		timedOut := errors.As(err, &ne) && ne.Timeout()
		_ = c.Close()
		if withPreauth {
			assert.False(t, timedOut, "closed by the server within handshake_timeout: %v", err)
			assert.Less(t, time.Since(start), 2*time.Second)
		} else {
			assert.True(t, timedOut, "without preauth the half-open connection stays: %v", err)
		}
	}
}

// A request whose header list is larger than max_header_list_size is refused before the
// token is even looked at (the connection is closed); without preauth grpc-go reads up to
// 16 MiB of them. A list within the bound is served.
func TestMaxHeaderListSize(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Authenticator = authID
	big := strings.Repeat("h", 64<<10)
	for _, withPreauth := range []bool{false, true} {
		addr, _, ls := serve(t, cfg, withPreauth)
		err := exportWith(t, addr, "good", "x-big", big)
		if withPreauth {
			require.Error(t, err, "64 KiB of headers over an 8 KiB bound")
			assert.NotEqual(t, codes.Unauthenticated, status.Code(err), "refused for its size, not its token: %v", err)
			assert.Zero(t, ls.accepted.Load())
		} else {
			require.NoError(t, err, "without preauth 64 KiB of headers are read")
		}
		require.NoError(t, exportWith(t, addr, "good", "x-small", strings.Repeat("h", 1<<10)), "preauth %v", withPreauth)
	}
}

func TestStart(t *testing.T) {
	cfg := &Config{Authenticator: authID, HandshakeTimeout: time.Second, MaxHeaderListSize: 8192}
	p := newPreauth(cfg, zap.NewNop())
	assert.Equal(t, []component.ID{authID}, p.Dependencies(), "the authenticator starts first")
	_, err := p.GetGRPCServerOptions(context.Background())
	assert.ErrorContains(t, err, "before the extension started")

	err = p.Start(context.Background(), host{ext: map[component.ID]component.Component{}})
	assert.EqualError(t, err, `start preauth: authenticator "bearertokenauth/agents" is not an extension of this collector (list it under service::extensions)`)
	notAuth := struct {
		component.StartFunc
		component.ShutdownFunc
	}{}
	err = p.Start(context.Background(), host{ext: map[component.ID]component.Component{authID: notAuth}})
	assert.EqualError(t, err, `start preauth: extension "bearertokenauth/agents" is not a server authenticator`)

	require.NoError(t, p.Start(context.Background(), host{ext: map[component.ID]component.Component{authID: tokenAuth{}}}))
	opts, err := p.GetGRPCServerOptions(context.Background())
	require.NoError(t, err)
	assert.Len(t, opts, 3)
	require.NoError(t, p.Shutdown(context.Background()))
	require.NoError(t, newPreauth(cfg, zap.NewNop()).Shutdown(context.Background()), "safe without Start")
}

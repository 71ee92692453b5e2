package authretryextension

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configmiddleware"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var authRetryID = component.MustNewID("auth_retry")

// gateway answers every Export with refuse (a status) until refuse is nil.
type gateway struct {
	plogotlp.UnimplementedGRPCServer
	refuse   atomic.Pointer[status.Status]
	refused  atomic.Int64
	accepted atomic.Int64 // log records
}

func (g *gateway) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	if st := g.refuse.Load(); st != nil {
		g.refused.Add(1)
		return plogotlp.NewExportResponse(), st.Err()
	}
	g.accepted.Add(int64(req.Logs().LogRecordCount()))
	return plogotlp.NewExportResponse(), nil
}

func serve(t *testing.T, refuse *status.Status) (string, *gateway) {
	t.Helper()
	g := &gateway{}
	g.refuse.Store(refuse)
	srv := grpc.NewServer()
	plogotlp.RegisterGRPCServer(srv, g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), g
}

type host struct {
	component.Host
	ext map[component.ID]component.Component
}

func (h host) GetExtensions() map[component.ID]component.Component { return h.ext }

func logs(n int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := 0; i < n; i++ {
		lrs.AppendEmpty().Body().SetStr("line")
	}
	return ld
}

// The collector's OTLP exporter, retrying for ever as the shipped agent does: a batch the
// gateway refuses for its credentials is dropped at once without auth_retry, and delivered
// once the gateway accepts the credentials again with it.
func TestExporterKeepsARefusedBatch(t *testing.T) {
	for _, withMiddleware := range []bool{false, true} {
		addr, gw := serve(t, status.New(codes.Unauthenticated, "provided authorization does not match expected scheme or token"))
		f := otlpexporter.NewFactory()
		cfg := f.CreateDefaultConfig().(*otlpexporter.Config)
		cfg.ClientConfig.Endpoint = addr
		cfg.ClientConfig.TLS = configtls.ClientConfig{Insecure: true}
		cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]() // the call waits for the outcome
		cfg.RetryConfig.InitialInterval = 20 * time.Millisecond
		cfg.RetryConfig.MaxInterval = 50 * time.Millisecond
		cfg.RetryConfig.MaxElapsedTime = 0
		exts := map[component.ID]component.Component{}
		if withMiddleware {
			cfg.ClientConfig.Middlewares = []configmiddleware.Config{{ID: authRetryID}}
			exts[authRetryID] = newAuthRetry(createDefaultConfig().(*Config), zap.NewNop(), time.Now)
		}
		exp, err := f.CreateLogs(t.Context(), exportertest.NewNopSettings(f.Type()), cfg)
		require.NoError(t, err)
		require.NoError(t, exp.Start(t.Context(), host{ext: exts}))

		done := make(chan error, 1)
		go func() { done <- exp.ConsumeLogs(context.Background(), logs(5)) }()
		if withMiddleware {
			require.Eventually(t, func() bool { return gw.refused.Load() >= 3 }, 5*time.Second, 10*time.Millisecond, "retried while refused")
			select {
			case err := <-done:
				t.Fatalf("the batch was given up while refused: %v", err)
			default:
			}
			gw.refuse.Store(nil) // the gateway accepts the token again
			require.NoError(t, <-done)
			assert.Equal(t, int64(5), gw.accepted.Load(), "the refused batch is delivered")
		} else {
			err := <-done
			assert.True(t, consumererror.IsPermanent(err), "without auth_retry the batch is dropped as permanent: %v", err)
			assert.Equal(t, int64(1), gw.refused.Load())
			assert.Zero(t, gw.accepted.Load())
		}
		require.NoError(t, exp.Shutdown(t.Context()))
	}
}

// call makes one unary Export through the interceptor against a server that answers st.
func call(t *testing.T, a *authRetry, st *status.Status) error {
	t.Helper()
	addr, _ := serve(t, st)
	opts, err := a.GetGRPCClientOptions(t.Context())
	require.NoError(t, err)
	conn, err := grpc.NewClient(addr, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	require.NoError(t, err)
	defer conn.Close()
	_, err = plogotlp.NewGRPCClient(conn).Export(t.Context(), plogotlp.NewExportRequestFromLogs(logs(1)))
	return err
}

func TestCodes(t *testing.T) {
	a := newAuthRetry(createDefaultConfig().(*Config), zap.NewNop(), time.Now)
	strict := newAuthRetry(&Config{LogInterval: time.Minute}, zap.NewNop(), time.Now)

	err := call(t, a, status.New(codes.Unauthenticated, "bad token"))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Contains(t, err.Error(), "the server refused the credentials (Unauthenticated: bad token)")
	assert.Equal(t, codes.Unavailable, status.Code(call(t, a, status.New(codes.PermissionDenied, "not allowed"))))
	assert.Equal(t, codes.PermissionDenied, status.Code(call(t, strict, status.New(codes.PermissionDenied, "not allowed"))), "permission_denied: false")
	assert.Equal(t, codes.Unavailable, status.Code(call(t, strict, status.New(codes.Unauthenticated, "bad token"))))
	// Other refusals are the exporter's to judge, untouched.
	for _, c := range []codes.Code{codes.InvalidArgument, codes.ResourceExhausted, codes.Unavailable, codes.Internal} {
		err := call(t, a, status.New(c, "other"))
		assert.Equal(t, c, status.Code(err))
		assert.Equal(t, "other", status.Convert(err).Message())
	}
	// The details travel with the new code.
	st, err := status.New(codes.Unauthenticated, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(7 * time.Second)})
	require.NoError(t, err)
	got := status.Convert(call(t, a, st))
	require.Len(t, got.Details(), 1)
	assert.Equal(t, 7*time.Second, got.Details()[0].(*errdetails.RetryInfo).GetRetryDelay().AsDuration())
	require.NoError(t, call(t, a, nil))
}

// The first refusal is logged at once, then one line per log_interval with the count, and
// one when the server accepts again.
func TestLogging(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	now := time.Unix(1000, 0)
	a := newAuthRetry(&Config{LogInterval: time.Minute}, zap.New(core), func() time.Time { return now })
	st := status.New(codes.Unauthenticated, "bad token")
	a.refused("gw:4317", "/opentelemetry.proto.collector.logs.v1.LogsService/Export", st)
	for i := 0; i < 10; i++ {
		now = now.Add(5 * time.Second)
		a.refused("gw:4317", "/m", st)
	}
	require.Equal(t, 1, logs.Len(), "one line for the first refusal, none for 10 more within the interval")
	first := logs.All()[0]
	assert.Equal(t, zapcore.WarnLevel, first.Level)
	assert.Equal(t, "Unauthenticated", first.ContextMap()["grpc_code"])
	assert.Equal(t, "gw:4317", first.ContextMap()["target"])

	now = now.Add(10 * time.Second) // 60 s after the first line
	a.refused("gw:4317", "/m", st)
	require.Equal(t, 2, logs.Len())
	again := logs.All()[1].ContextMap()
	assert.Equal(t, int64(11), again["refused_calls"], "the refusals since the last line")
	assert.Equal(t, time.Minute, again["refused_for"])

	a.accepted("other:4317") // no episode there: nothing to say
	now = now.Add(time.Second)
	a.accepted("gw:4317")
	require.Equal(t, 3, logs.Len())
	end := logs.All()[2]
	assert.Equal(t, zapcore.InfoLevel, end.Level)
	assert.Equal(t, int64(12), end.ContextMap()["refused_calls"])
	assert.Equal(t, 61*time.Second, end.ContextMap()["refused_for"])
	a.accepted("gw:4317")
	assert.Equal(t, 3, logs.Len(), "once per episode")
}

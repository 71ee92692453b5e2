package authretryextension

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var (
	_ extensionmiddleware.GRPCClient = (*authRetry)(nil)
	_ component.Component            = (*authRetry)(nil)
)

// authRetry rewrites a refusal of the credentials into Unavailable on unary calls. The OTLP
// exporter treats Unauthenticated and PermissionDenied as permanent (it drops the batch, and
// the persistent queue deletes it); Unavailable is retried by retry_on_failure, and while it
// retries the batch stays in the sending queue, on disk with a storage extension.
type authRetry struct {
	component.StartFunc
	component.ShutdownFunc

	cfg    *Config
	logger *zap.Logger
	now    func() time.Time

	mu       sync.Mutex
	episodes map[string]*episode // by the connection's target
}

// episode is one stretch of refusals on one target: from the first refusal to the next call
// the server accepts.
type episode struct {
	start    time.Time
	logged   time.Time // the last WARN
	total    int
	unlogged int // refusals since the last WARN
}

func newAuthRetry(cfg *Config, logger *zap.Logger, now func() time.Time) *authRetry {
	return &authRetry{cfg: cfg, logger: logger, now: now, episodes: map[string]*episode{}}
}

// GetGRPCClientOptions chains the interceptor after configgrpc's own (WithChainUnaryInterceptor,
// so that the exporter's headers interceptor is kept).
func (a *authRetry) GetGRPCClientOptions(context.Context) ([]grpc.DialOption, error) {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(a.intercept)}, nil
}

func (a *authRetry) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	target := cc.Target()
	if err == nil {
		a.accepted(target)
		return nil
	}
	st, ok := status.FromError(err)
	if !ok || !a.refusal(st.Code()) {
		return err
	}
	a.refused(target, method, st)
	// Keep the details (a RetryInfo would still set the delay); change code and message.
	p := st.Proto()
	p.Code = int32(codes.Unavailable)
	p.Message = fmt.Sprintf("the server refused the credentials (%s: %s); kept for retry by %s", st.Code(), st.Message(), "auth_retry")
	return status.FromProto(p).Err()
}

func (a *authRetry) refusal(c codes.Code) bool {
	return c == codes.Unauthenticated || (c == codes.PermissionDenied && a.cfg.PermissionDenied)
}

// refused logs the first refusal of an episode at once and then one line per log_interval.
func (a *authRetry) refused(target, method string, st *status.Status) {
	now := a.now()
	a.mu.Lock()
	e, ok := a.episodes[target]
	if !ok {
		e = &episode{start: now, logged: now}
		a.episodes[target] = e
	}
	e.total++
	e.unlogged++
	first, due := !ok, now.Sub(e.logged) >= a.cfg.LogInterval
	var since, refusedFor time.Duration
	n := e.unlogged
	if due {
		since, refusedFor = now.Sub(e.logged), now.Sub(e.start)
		e.logged, e.unlogged = now, 0
	}
	if first {
		e.unlogged = 0
	}
	a.mu.Unlock()

	switch {
	case first:
		a.logger.Warn("The server refuses this exporter's credentials; the data is kept in the sending queue and retried until it accepts them (check the token or certificate on both sides)",
			zap.String("target", target), zap.String("method", method),
			zap.String("grpc_code", st.Code().String()), zap.String("error", st.Message()))
	case due:
		a.logger.Warn("The server still refuses this exporter's credentials; the data waits in the sending queue",
			zap.String("target", target), zap.String("grpc_code", st.Code().String()), zap.String("error", st.Message()),
			zap.Int("refused_calls", n), zap.Duration("in_last", since), zap.Duration("refused_for", refusedFor))
	}
}

// accepted ends the target's episode, if there is one, with one INFO line.
func (a *authRetry) accepted(target string) {
	a.mu.Lock()
	e, ok := a.episodes[target]
	if ok {
		delete(a.episodes, target)
	}
	a.mu.Unlock()
	if ok {
		a.logger.Info("The server accepts this exporter's credentials again; the kept data is being sent",
			zap.String("target", target), zap.Int("refused_calls", e.total), zap.Duration("refused_for", a.now().Sub(e.start)))
	}
}

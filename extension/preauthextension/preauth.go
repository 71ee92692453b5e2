package preauthextension

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

var (
	_ extensionmiddleware.GRPCServer  = (*preauth)(nil)
	_ extensionmiddleware.HTTPServer  = (*preauth)(nil)
	_ extensioncapabilities.Dependent = (*preauth)(nil)
	_ component.Component             = (*preauth)(nil)
)

// preauth checks a stream's headers from grpc-go's tap handle, which runs as soon as a
// stream's HEADERS frame is decoded: a refused stream is answered (trailers-only, with
// RST_STREAM) before any of its DATA frames are read into a message, so a sender without
// credentials costs the server a header list, never a request body. The receiver's own auth
// interceptor still runs for every accepted stream and is what puts the auth data in the
// request's context; this check only comes first.
type preauth struct {
	cfg    *Config
	logger *zap.Logger
	auth   atomic.Pointer[extensionauth.Server] // set by Start
}

func newPreauth(cfg *Config, logger *zap.Logger) *preauth {
	return &preauth{cfg: cfg, logger: logger}
}

// Dependencies makes the collector start the authenticator first (it loads its tokens in
// its own Start) and stop it after this extension.
func (p *preauth) Dependencies() []component.ID {
	return []component.ID{p.cfg.Authenticator}
}

// Start finds the authenticator among the collector's extensions.
func (p *preauth) Start(_ context.Context, host component.Host) error {
	ext, ok := host.GetExtensions()[p.cfg.Authenticator]
	if !ok {
		return fmt.Errorf("start preauth: authenticator %q is not an extension of this collector (list it under service::extensions)", p.cfg.Authenticator)
	}
	srv, ok := ext.(extensionauth.Server)
	if !ok {
		return fmt.Errorf("start preauth: extension %q is not a server authenticator", p.cfg.Authenticator)
	}
	p.auth.Store(&srv)
	p.logger.Info("Checking each gRPC stream's credentials before its request is read",
		zap.String("authenticator", p.cfg.Authenticator.String()),
		zap.Duration("handshake_timeout", p.cfg.HandshakeTimeout),
		zap.Uint32("max_header_list_size", p.cfg.MaxHeaderListSize),
		zap.Int("max_in_flight_requests", p.cfg.MaxInFlightRequests))
	return nil
}

// Shutdown has nothing to release; it is safe without Start.
func (p *preauth) Shutdown(context.Context) error { return nil }

// GetGRPCServerOptions is called by configgrpc when a receiver that lists this middleware
// builds its server, after the extensions have started.
func (p *preauth) GetGRPCServerOptions(context.Context) ([]grpc.ServerOption, error) {
	if p.auth.Load() == nil {
		return nil, errors.New("preauth: gRPC server options requested before the extension started")
	}
	limit := newInFlight(p.cfg.MaxInFlightRequests, "grpc", p.logger)
	return []grpc.ServerOption{
		grpc.InTapHandle(func(ctx context.Context, info *tap.Info) (context.Context, error) {
			ctx, err := p.tap(ctx, info)
			if err != nil {
				return ctx, err
			}
			return limit.tapStream(ctx)
		}),
		grpc.ConnectionTimeout(p.cfg.HandshakeTimeout),
		grpc.MaxHeaderListSize(p.cfg.MaxHeaderListSize),
	}, nil
}

// GetHTTPHandler is called by confighttp when a receiver that lists this middleware builds
// its server. HTTP needs no early token check (confighttp's auth runs before the body is
// read); the middleware bounds the requests in flight.
func (p *preauth) GetHTTPHandler(context.Context) (extensionmiddleware.WrapHTTPHandlerFunc, error) {
	limit := newInFlight(p.cfg.MaxInFlightRequests, "http", p.logger)
	return func(_ context.Context, next http.Handler) (http.Handler, error) { return limit.handler(next), nil }, nil
}

// tap runs on the connection's reader goroutine, under the transport's lock: it must not
// block. Authenticators check headers in memory (bearertokenauth: a constant-time compare).
func (p *preauth) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	auth := *p.auth.Load()
	if _, err := auth.Authenticate(ctx, info.Header); err != nil {
		if p.logger.Core().Enabled(zap.DebugLevel) {
			var addr string
			if pr, ok := peer.FromContext(ctx); ok && pr.Addr != nil {
				addr = pr.Addr.String()
			}
			p.logger.Debug("Refused a gRPC stream before reading its request",
				zap.String("method", info.FullMethodName), zap.String("peer", addr), zap.Error(err))
		}
		if s, ok := status.FromError(err); ok {
			return ctx, s.Err()
		}
		// grpc-go would answer PermissionDenied for a plain error; the receiver's own auth
		// interceptor answers Unauthenticated, and so must this.
		return ctx, status.Error(codes.Unauthenticated, err.Error())
	}
	return ctx, nil
}

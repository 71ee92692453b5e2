package preauthextension

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// inFlight bounds the requests one server has accepted and not yet answered. Each server
// (one gRPC, one HTTP listener) gets its own, so the bound is per listener. A refusal is
// retryable (gRPC Unavailable, HTTP 503 with Retry-After): the OTLP exporters keep the batch
// in their queues and send it again, so a bound costs latency, never data.
type inFlight struct {
	limit    int64
	n        atomic.Int64
	refused  atomic.Int64
	logger   *zap.Logger
	protocol string
	// lastWarn is when the last "refusing" line was logged (Unix nanoseconds): one line per
	// episode of refusals, at most one a minute, never one per request.
	lastWarn atomic.Int64
}

// warnEvery is how often a sustained overload is logged again.
const warnEvery = time.Minute

func newInFlight(limit int, protocol string, logger *zap.Logger) *inFlight {
	return &inFlight{limit: int64(limit), protocol: protocol, logger: logger}
}

// acquire takes a slot, or reports that all are taken.
func (f *inFlight) acquire() bool {
	if f.limit <= 0 {
		return true
	}
	if f.n.Add(1) > f.limit {
		f.n.Add(-1)
		f.refuse()
		return false
	}
	return true
}

func (f *inFlight) release() {
	if f.limit > 0 {
		f.n.Add(-1)
	}
}

func (f *inFlight) refuse() {
	total := f.refused.Add(1)
	now := time.Now().UnixNano()
	last := f.lastWarn.Load()
	if now-last < int64(warnEvery) || !f.lastWarn.CompareAndSwap(last, now) {
		return
	}
	f.logger.Warn("Refusing requests: the listener has max_in_flight_requests in flight; senders retry",
		zap.String("protocol", f.protocol), zap.Int64("max_in_flight_requests", f.limit),
		zap.Int64("refused_since_start", total))
}

// errBusy is a gRPC refusal the OTLP exporters retry (Unavailable is retryable in the OTLP
// specification; ResourceExhausted is only with RetryInfo).
var errBusy = status.Error(codes.Unavailable, "server busy: too many requests in flight, retry later")

// tapStream takes a slot for a stream the tap handle accepted and gives it back when the
// stream ends: grpc-go cancels every stream's context when it is finished, reset or its
// connection closes, and the tap handle's context is the stream's own.
func (f *inFlight) tapStream(ctx context.Context) (context.Context, error) {
	if !f.acquire() {
		return ctx, errBusy
	}
	if f.limit > 0 {
		context.AfterFunc(ctx, f.release)
	}
	return ctx, nil
}

// handler refuses a request beyond the bound before its body is read: confighttp runs
// middlewares after its auth interceptor and inside its (lazy) decompressor, and net/http
// reads a body only when a handler does.
func (f *inFlight) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.acquire() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "server busy: too many requests in flight, retry later", http.StatusServiceUnavailable)
			return
		}
		defer f.release()
		next.ServeHTTP(w, r)
	})
}

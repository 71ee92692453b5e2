package preauthextension

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

// minHeaderListSize is the least max_header_list_size accepted: an OTLP client's headers
// (authorization, user-agent, content-type, grpc-encoding, te) and HTTP/2's 32 bytes per field.
const minHeaderListSize = 1024

// Config is the preauth extension's configuration.
type Config struct {
	// Authenticator names the server authenticator extension that checks each stream's
	// headers, normally the one the receiver's own auth block names (bearertokenauth/agents).
	Authenticator component.ID `mapstructure:"authenticator"`
	// HandshakeTimeout bounds a new connection from accept to the end of its TLS and HTTP/2
	// handshake (grpc.ConnectionTimeout; grpc-go's default is 120 s).
	HandshakeTimeout time.Duration `mapstructure:"handshake_timeout"`
	// MaxHeaderListSize bounds, in bytes, the header list of a request (grpc.MaxHeaderListSize):
	// grpc-go reads the whole list before the tap handle can check the token, up to 16 MiB a
	// stream by default. The server announces it in its SETTINGS; a larger list closes the
	// connection. Only this server: the collector's clients keep grpc-go's default.
	MaxHeaderListSize uint32 `mapstructure:"max_header_list_size"`
	// MaxInFlightRequests bounds the requests each listener that lists this middleware has
	// accepted and not yet answered, over all its connections: a request beyond it is refused
	// before its body is read, retryably (gRPC Unavailable, HTTP 503). With the receiver's
	// message size it bounds the memory requests in flight can take, however many senders
	// connect. 0 leaves it unbounded.
	MaxInFlightRequests int `mapstructure:"max_in_flight_requests"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate reports every problem at once, each quoting its key.
func (c *Config) Validate() error {
	var errs []error
	if c.Authenticator == (component.ID{}) {
		errs = append(errs, errors.New("'authenticator' must name a server authenticator extension, e.g. bearertokenauth/agents"))
	}
	if c.HandshakeTimeout <= 0 {
		errs = append(errs, errors.New("'handshake_timeout' must be > 0"))
	}
	if c.MaxHeaderListSize < minHeaderListSize {
		errs = append(errs, fmt.Errorf("'max_header_list_size' must be at least %d bytes (a request's token, user agent and encoding headers), got %d", minHeaderListSize, c.MaxHeaderListSize))
	}
	if c.MaxInFlightRequests < 0 {
		errs = append(errs, fmt.Errorf("'max_in_flight_requests' must be >= 0 (0: unbounded), got %d", c.MaxInFlightRequests))
	}
	return errors.Join(errs...)
}

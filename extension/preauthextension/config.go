package preauthextension

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Config is the preauth extension's configuration.
type Config struct {
	// Authenticator names the server authenticator extension that checks each stream's
	// headers, normally the one the receiver's own auth block names (bearertokenauth/agents).
	Authenticator component.ID `mapstructure:"authenticator"`
	// HandshakeTimeout bounds a new connection from accept to the end of its TLS and HTTP/2
	// handshake (grpc.ConnectionTimeout; grpc-go's default is 120 s).
	HandshakeTimeout time.Duration `mapstructure:"handshake_timeout"`

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
	return errors.Join(errs...)
}

package authretryextension

import (
	"errors"
	"time"
)

// Config is the auth_retry extension's configuration.
type Config struct {
	// PermissionDenied also keeps the calls refused with PermissionDenied (authorization),
	// not only those refused with Unauthenticated (authentication).
	PermissionDenied bool `mapstructure:"permission_denied"`
	// LogInterval: the first refusal is logged at once, then at most one line per interval
	// while they last, with the count.
	LogInterval time.Duration `mapstructure:"log_interval"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate reports every problem at once, each quoting its key.
func (c *Config) Validate() error {
	var errs []error
	if c.LogInterval <= 0 {
		errs = append(errs, errors.New("'log_interval' must be > 0"))
	}
	return errors.Join(errs...)
}

package safestorageextension

import (
	"errors"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
)

// Config is contrib's file_storage configuration, every key as documented there, plus the
// bound on the start-up check of each database file.
type Config struct {
	filestorage.Config `mapstructure:",squash"`

	// CheckTimeout bounds the check of one database file at start. A check that does not end
	// in time decides nothing: the file is opened as it is.
	CheckTimeout time.Duration `mapstructure:"check_timeout"`
}

// Validate checks this extension's own key; the embedded file_storage keys are validated by
// their own Validate.
func (c *Config) Validate() error {
	if c.CheckTimeout <= 0 {
		return errors.New("'check_timeout' must be > 0")
	}
	return nil
}

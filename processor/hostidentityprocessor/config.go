package hostidentityprocessor

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Config is the host_identity processor's configuration.
type Config struct {
	// HostName names the host when OTEL_RESOURCE_ATTRIBUTES has no host.name; "" (an unset
	// ${env:K8S_NODE_NAME} included) falls through to os.Hostname().
	HostName string `mapstructure:"host_name"`
	// HostID adds host.id from the machine id (/etc/machine-id, else
	// /var/lib/dbus/machine-id), as the system detector does when host.id is enabled.
	HostID bool `mapstructure:"host_id"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate rejects a host_name no host or node can have: one with spaces or control
// characters is a quoting or templating mistake, and would key oom_classifier by it.
func (c *Config) Validate() error {
	if strings.IndexFunc(c.HostName, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("'host_name' must not contain spaces or control characters: %s", strconv.Quote(c.HostName))
	}
	return nil
}

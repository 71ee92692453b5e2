package hostidentityprocessor

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// This file resolves the host's identity once, from the same sources and in the same order
// as resourcedetectionprocessor with detectors [env, system] and the system detector's `os`
// hostname source, with a configured name between the two (see README: Why not
// resourcedetection).

// Where host.name came from, as the start-up log line names it.
const (
	sourceEnv    = "env"    // OTEL_RESOURCE_ATTRIBUTES
	sourceConfig = "config" // host_name
	sourceOS     = "os"     // os.Hostname()
)

// envResourceAttributes is the variable the SDKs and the env detector read.
const envResourceAttributes = "OTEL_RESOURCE_ATTRIBUTES"

// machineIDPaths are where the system detector (through the SDK's host id provider) reads
// host.id on Linux, in order.
var machineIDPaths = []string{"/etc/machine-id", "/var/lib/dbus/machine-id"}

// sources is the outside world identity reads, swappable for testing.
type sources struct {
	getenv         func(string) string
	hostname       func() (string, error)
	readFile       func(string) ([]byte, error)
	machineIDPaths []string
}

func osSources() sources {
	return sources{getenv: os.Getenv, hostname: os.Hostname, readFile: os.ReadFile, machineIDPaths: machineIDPaths}
}

// identity is what the processor stamps on resources.
type identity struct {
	hostName   string
	nameSource string
	hostID     string // "" when not asked for or not found
	idSource   string // the file host.id was read from
}

// resolve finds host.name (OTEL_RESOURCE_ATTRIBUTES, then host_name, then os.Hostname) and,
// when asked, host.id. Only a host with no name at all is an error; a missing machine id
// leaves host.id off, as the system detector does.
func resolve(cfg *Config, src sources) (identity, error) {
	var id identity
	envName, err := envHostName(src.getenv(envResourceAttributes))
	if err != nil {
		return id, err
	}
	switch {
	case envName != "":
		id.hostName, id.nameSource = envName, sourceEnv
	case cfg.HostName != "":
		id.hostName, id.nameSource = cfg.HostName, sourceConfig
	default:
		name, err := src.hostname()
		if err == nil && name == "" {
			err = errors.New("empty host name")
		}
		if err != nil {
			return id, fmt.Errorf("resolve host.name: %s has no host.name, 'host_name' is empty and os.Hostname failed: %w", envResourceAttributes, err)
		}
		id.hostName, id.nameSource = name, sourceOS
	}
	if cfg.HostID {
		for _, p := range src.machineIDPaths {
			if b, err := src.readFile(p); err == nil {
				if v := strings.TrimSpace(string(b)); v != "" {
					id.hostID, id.idSource = v, p
					break
				}
			}
		}
	}
	return id, nil
}

// envHostName returns host.name from an OTEL_RESOURCE_ATTRIBUTES value: comma-separated
// key=value pairs, keys and values trimmed, values percent-decoded (the SDK specification's
// format, as the env detector reads it); of several, the last wins, as there. A malformed
// host.name pair is an error, as it is for the env detector; other pairs are not this
// processor's to judge.
func envHostName(v string) (string, error) {
	name := ""
	for _, pair := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(pair, "=")
		if strings.TrimSpace(k) != "host.name" {
			continue
		}
		if !ok {
			return "", fmt.Errorf("read host.name from %s: %q has no '='", envResourceAttributes, strings.TrimSpace(pair))
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return "", fmt.Errorf("read host.name from %s: decode %q: %w", envResourceAttributes, strings.TrimSpace(val), err)
		}
		name = dec
	}
	return name, nil
}

package hostidentityprocessor

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSources stands in for the environment, the hostname and the machine-id files.
func fakeSources(env map[string]string, hostname string, hostErr error, files map[string]string) sources {
	return sources{
		getenv:   func(k string) string { return env[k] },
		hostname: func() (string, error) { return hostname, hostErr },
		readFile: func(p string) ([]byte, error) {
			if v, ok := files[p]; ok {
				return []byte(v), nil
			}
			return nil, fs.ErrNotExist
		},
		machineIDPaths: machineIDPaths,
	}
}

// host.name: OTEL_RESOURCE_ATTRIBUTES (the env detector), then host_name, then the hostname
// (the system detector's os source).
func TestResolvePrecedence(t *testing.T) {
	tests := []struct {
		name       string
		env        string
		hostName   string
		wantName   string
		wantSource string
	}{
		{name: "env first", env: "service.name=trainer,host.name=from-env", hostName: "from-config", wantName: "from-env", wantSource: sourceEnv},
		{name: "config over hostname", env: "service.name=trainer", hostName: "from-config", wantName: "from-config", wantSource: sourceConfig},
		{name: "hostname last", wantName: "machine", wantSource: sourceOS},
		{name: "empty env value falls through", env: "host.name=", hostName: "from-config", wantName: "from-config", wantSource: sourceConfig},
		{name: "trimmed and percent-decoded", env: " host.name = gpu%2Dnode%201 ", wantName: "gpu-node 1", wantSource: sourceEnv},
		{name: "plus is not a space", env: "host.name=a+b", wantName: "a+b", wantSource: sourceEnv},
		{name: "last of several wins", env: "host.name=first,host.name=second", wantName: "second", wantSource: sourceEnv},
		{name: "other keys ignored", env: "host.names=x,k8s.node.name=n", wantName: "machine", wantSource: sourceOS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := fakeSources(map[string]string{envResourceAttributes: tt.env}, "machine", nil, nil)
			id, err := resolve(&Config{HostName: tt.hostName}, src)
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, id.hostName)
			assert.Equal(t, tt.wantSource, id.nameSource)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	_, err := resolve(&Config{}, fakeSources(map[string]string{envResourceAttributes: "host.name"}, "machine", nil, nil))
	assert.ErrorContains(t, err, `read host.name from OTEL_RESOURCE_ATTRIBUTES: "host.name" has no '='`)

	_, err = resolve(&Config{}, fakeSources(map[string]string{envResourceAttributes: "host.name=%zz"}, "machine", nil, nil))
	assert.ErrorContains(t, err, `decode "%zz"`)

	_, err = resolve(&Config{}, fakeSources(nil, "", errors.New("uname: EPERM"), nil))
	assert.ErrorContains(t, err, "resolve host.name: OTEL_RESOURCE_ATTRIBUTES has no host.name, 'host_name' is empty and os.Hostname failed: uname: EPERM")

	_, err = resolve(&Config{}, fakeSources(nil, "", nil, nil))
	assert.ErrorContains(t, err, "empty host name")

	// A hostname that fails does not matter when a name comes first.
	id, err := resolve(&Config{HostName: "n"}, fakeSources(nil, "", errors.New("uname: EPERM"), nil))
	require.NoError(t, err)
	assert.Equal(t, "n", id.hostName)
}

// host.id: /etc/machine-id, else /var/lib/dbus/machine-id, trimmed; off unless asked for.
func TestResolveHostID(t *testing.T) {
	both := map[string]string{"/etc/machine-id": "abc123\n", "/var/lib/dbus/machine-id": "dbus456\n"}
	tests := []struct {
		name     string
		on       bool
		files    map[string]string
		wantID   string
		wantFrom string
	}{
		{name: "off by default", files: both},
		{name: "etc first", on: true, files: both, wantID: "abc123", wantFrom: "/etc/machine-id"},
		{name: "dbus when etc is missing", on: true, files: map[string]string{"/var/lib/dbus/machine-id": "dbus456\n"}, wantID: "dbus456", wantFrom: "/var/lib/dbus/machine-id"},
		{name: "dbus when etc is empty", on: true, files: map[string]string{"/etc/machine-id": "\n", "/var/lib/dbus/machine-id": "dbus456"}, wantID: "dbus456", wantFrom: "/var/lib/dbus/machine-id"},
		{name: "none found", on: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := resolve(&Config{HostID: tt.on}, fakeSources(nil, "machine", nil, tt.files))
			require.NoError(t, err)
			assert.Equal(t, tt.wantID, id.hostID)
			assert.Equal(t, tt.wantFrom, id.idSource)
		})
	}
}

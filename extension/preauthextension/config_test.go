package preauthextension

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/gpumem/otelcol-gpumem/extension/preauthextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id      component.ID
		want    *Config
		wantErr []string // the YAML keys the errors must quote, all reported at once
	}{
		{id: component.NewID(metadata.Type), want: &Config{Authenticator: authID, HandshakeTimeout: 10 * time.Second, MaxHeaderListSize: 8192, MaxInFlightRequests: 64}},
		{id: component.NewIDWithName(metadata.Type, "fast"), want: &Config{Authenticator: authID, HandshakeTimeout: 2 * time.Second, MaxHeaderListSize: 4096, MaxInFlightRequests: 8}},
		{id: component.NewIDWithName(metadata.Type, "none"), wantErr: []string{"'authenticator' must name a server authenticator extension"}},
		{id: component.NewIDWithName(metadata.Type, "bad"), wantErr: []string{"'authenticator' must", "'handshake_timeout' must be > 0", "'max_header_list_size' must be at least 1024 bytes (a request's token, user agent and encoding headers), got 100",
			"'max_in_flight_requests' must be >= 0 (0: unbounded), got -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestFactory(t *testing.T) {
	f := NewFactory()
	assert.Equal(t, metadata.Type, f.Type())
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Authenticator = authID
	ext, err := f.Create(t.Context(), extensiontestSettings(), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Shutdown(t.Context()))
}

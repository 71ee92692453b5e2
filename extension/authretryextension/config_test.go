package authretryextension

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/gpumem/otelcol-gpumem/extension/authretryextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id      component.ID
		want    *Config
		wantErr string // the YAML key the error must quote
	}{
		{id: component.NewID(metadata.Type), want: &Config{PermissionDenied: true, LogInterval: time.Minute}},
		{id: component.NewIDWithName(metadata.Type, "strict"), want: &Config{PermissionDenied: false, LogInterval: 5 * time.Minute}},
		{id: component.NewIDWithName(metadata.Type, "bad"), wantErr: "'log_interval' must be > 0"},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
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
	ext, err := f.Create(t.Context(), extensiontestSettings(), f.CreateDefaultConfig())
	require.NoError(t, err)
	require.NoError(t, ext.Start(t.Context(), nil))
	require.NoError(t, ext.Shutdown(t.Context()))
}

package hostidentityprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	tests := []struct {
		id      component.ID
		want    *Config
		wantErr string // the YAML key the error must quote
	}{
		{id: component.NewID(metadata.Type), want: &Config{}},
		{id: component.NewIDWithName(metadata.Type, "node"), want: &Config{HostName: "gpu-node-7"}},
		{id: component.NewIDWithName(metadata.Type, "with_id"), want: &Config{HostID: true}},
		{id: component.NewIDWithName(metadata.Type, "bad_name"), wantErr: `'host_name' must not contain spaces or control characters: "gpu node 7"`},
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

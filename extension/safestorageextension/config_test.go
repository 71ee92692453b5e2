package safestorageextension

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/gpumem/otelcol-gpumem/extension/safestorageextension/internal/metadata"
)

// file_storage's keys keep their meaning (they are contrib's Config, squashed); check_timeout
// is the one key added.
func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	def, err := cm.Sub("safe_file_storage")
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, def.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, 2*time.Minute, cfg.CheckTimeout)
	assert.False(t, cfg.Recreate)

	q, err := cm.Sub(component.NewIDWithName(metadata.Type, "queue").String())
	require.NoError(t, err)
	cfg = createDefaultConfig().(*Config)
	require.NoError(t, q.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "/tmp", cfg.Directory)
	assert.True(t, cfg.Recreate)
	assert.True(t, cfg.Compaction.OnStart)
	assert.Equal(t, time.Second, cfg.Timeout)
	assert.Equal(t, 30*time.Second, cfg.CheckTimeout)

	bad, err := cm.Sub(component.NewIDWithName(metadata.Type, "bad").String())
	require.NoError(t, err)
	cfg = createDefaultConfig().(*Config)
	require.NoError(t, bad.Unmarshal(cfg))
	err = confmap.Validate(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "'check_timeout' must be > 0")
}

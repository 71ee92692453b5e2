package safestorageextension

import (
	"context"
	"fmt"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/gpumem/otelcol-gpumem/extension/safestorageextension/internal/metadata"
)

// NewFactory returns the factory of the safe_file_storage extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	inner, ok := filestorage.NewFactory().CreateDefaultConfig().(*filestorage.Config)
	if !ok {
		panic(fmt.Sprintf("file_storage's default config is %T", filestorage.NewFactory().CreateDefaultConfig()))
	}
	// Long enough for bbolt to walk every page of a multi-GiB queue on a slow disk; the
	// collector opens the same file right after, which walks them again.
	return &Config{Config: *inner, CheckTimeout: 2 * time.Minute}
}

func create(ctx context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("create %s extension: unexpected config type %T", metadata.Type, cfg)
	}
	// contrib's factory refuses an ID of another type; the ID names no file.
	innerSet := set
	innerSet.ID = component.NewIDWithName(filestorage.NewFactory().Type(), set.ID.Name())
	inner, err := filestorage.NewFactory().Create(ctx, innerSet, &c.Config)
	if err != nil {
		return nil, fmt.Errorf("create %s extension: %w", set.ID, err)
	}
	st, ok := inner.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("create %s extension: file_storage is %T, not a storage extension", set.ID, inner)
	}
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, fmt.Errorf("create %s extension telemetry: %w", set.ID, err)
	}
	return &safeStorage{cfg: c, inner: st, logger: set.Logger, tel: tel, check: checkInChild, now: time.Now}, nil
}

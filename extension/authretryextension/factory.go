package authretryextension

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/gpumem/otelcol-gpumem/extension/authretryextension/internal/metadata"
)

// NewFactory returns the factory of the auth_retry extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	// PermissionDenied too: like Unauthenticated it says the credentials (or the policy behind
	// them) are refused, not the data, and grpc-go itself answers PermissionDenied when a
	// server's tap handle refuses a stream with a plain error. One line a minute is enough to
	// see that it lasts without flooding the log at the exporter's retry rate.
	return &Config{PermissionDenied: true, LogInterval: time.Minute}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("create %s extension: unexpected config type %T", metadata.Type, cfg)
	}
	return newAuthRetry(c, set.Logger, time.Now), nil
}

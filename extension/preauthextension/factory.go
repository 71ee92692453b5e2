package preauthextension

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/gpumem/otelcol-gpumem/extension/preauthextension/internal/metadata"
)

// NewFactory returns the factory of the preauth extension.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	// No authenticator: it names an extension of the user's config. 10 s is ample for a TLS
	// 1.3 handshake across a cluster and a third of the 30 s in which the shipped gateway
	// closes every other kind of half-open connection. 8 KiB of headers is what grpc-go
	// announces as its next default, ten times an agent's. 64 requests in flight per listener
	// are 256 MiB of bodies at the gateway's 4 MiB message size, and about 64 agents sending
	// at once: a 1,000-node fleet exporting each second in a few milliseconds has under ten.
	return &Config{HandshakeTimeout: 10 * time.Second, MaxHeaderListSize: 8 << 10, MaxInFlightRequests: 64}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, fmt.Errorf("create %s extension: unexpected config type %T", metadata.Type, cfg)
	}
	return newPreauth(c, set.Logger), nil
}

// Package sharedcomponent lets one component instance serve several pipelines and signals, as
// the collector's own (internal) sharedcomponent package does for the OTLP receiver. Map holds
// a component created, started and shut down once per component ID (the gpu_mem receiver);
// Refs holds plain shared state, reference-counted (the oom_classifier's metric window).
package sharedcomponent // import "github.com/gpumem/otelcol-gpumem/internal/sharedcomponent"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Map holds the live instances, keyed by component ID.
type Map[K comparable, V component.Component] struct {
	mu         sync.Mutex
	components map[K]*Component[V]
}

// NewMap returns an empty Map.
func NewMap[K comparable, V component.Component]() *Map[K, V] {
	return &Map[K, V]{components: map[K]*Component[V]{}}
}

// LoadOrStore returns the instance for key, creating it with create on first use.
func (m *Map[K, V]) LoadOrStore(key K, create func() (V, error)) (*Component[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.components[key]; ok {
		return c, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	c := &Component[V]{Unwrap: v}
	c.removeFunc = func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.components, key)
	}
	m.components[key] = c
	return c, nil
}

// Component wraps an instance so that Start and Shutdown reach it once, whichever
// pipeline calls first.
type Component[V component.Component] struct {
	Unwrap V

	startOnce    sync.Once
	startErr     error
	shutdownOnce sync.Once
	shutdownErr  error
	removeFunc   func()
}

// Start starts the instance on the first call; later calls return the first result.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	c.startOnce.Do(func() { c.startErr = c.Unwrap.Start(ctx, host) })
	return c.startErr
}

// Shutdown shuts the instance down on the first call and forgets it, so a new pipeline
// (after a config reload) gets a fresh instance.
func (c *Component[V]) Shutdown(ctx context.Context) error {
	c.shutdownOnce.Do(func() {
		c.shutdownErr = c.Unwrap.Shutdown(ctx)
		c.removeFunc()
	})
	return c.shutdownErr
}

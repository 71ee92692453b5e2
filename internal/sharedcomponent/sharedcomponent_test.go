package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type counting struct {
	starts, shutdowns int
	startErr          error
}

func (c *counting) Start(context.Context, component.Host) error { c.starts++; return c.startErr }
func (c *counting) Shutdown(context.Context) error              { c.shutdowns++; return nil }

func TestOneInstanceStartedAndShutDownOnce(t *testing.T) {
	m := NewMap[string, *counting]()
	created := 0
	create := func() (*counting, error) { created++; return &counting{}, nil }

	a, err := m.LoadOrStore("id", create)
	require.NoError(t, err)
	b, err := m.LoadOrStore("id", create)
	require.NoError(t, err)
	assert.Same(t, a, b)
	assert.Equal(t, 1, created)

	host := componenttest.NewNopHost()
	require.NoError(t, a.Start(context.Background(), host))
	require.NoError(t, b.Start(context.Background(), host))
	require.NoError(t, a.Shutdown(context.Background()))
	require.NoError(t, b.Shutdown(context.Background()))
	assert.Equal(t, 1, a.Unwrap.starts)
	assert.Equal(t, 1, a.Unwrap.shutdowns)

	c, err := m.LoadOrStore("id", create)
	require.NoError(t, err)
	assert.NotSame(t, a, c, "after shutdown the next pipeline gets a fresh instance")
}

func TestStartErrorIsSharedAndCreateErrorNotStored(t *testing.T) {
	m := NewMap[string, *counting]()
	_, err := m.LoadOrStore("bad", func() (*counting, error) { return nil, errors.New("boom") })
	require.EqualError(t, err, "boom")

	boom := errors.New("start failed")
	c, err := m.LoadOrStore("bad", func() (*counting, error) { return &counting{startErr: boom}, nil })
	require.NoError(t, err)
	assert.ErrorIs(t, c.Start(context.Background(), componenttest.NewNopHost()), boom)
	assert.ErrorIs(t, c.Start(context.Background(), componenttest.NewNopHost()), boom, "every caller sees the first start's error")
	assert.Equal(t, 1, c.Unwrap.starts)
}

package sharedcomponent

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSharedUntilLastRelease(t *testing.T) {
	var m Refs[string, *int]
	created, closed := 0, 0
	create := func() (*int, error) { created++; v := created; return &v, nil }
	closeFn := func(*int) { closed++ }

	a, err := m.Acquire("x", create, closeFn)
	require.NoError(t, err)
	b, err := m.Acquire("x", create, closeFn)
	require.NoError(t, err)
	assert.Same(t, a.Value, b.Value)
	assert.Equal(t, 1, created)

	a.Release()
	a.Release() // twice: still one hold gone
	assert.Equal(t, 1, m.Len())
	assert.Equal(t, 0, closed)
	b.Release()
	assert.Equal(t, 0, m.Len())
	assert.Equal(t, 1, closed)

	c, err := m.Acquire("x", create, closeFn)
	require.NoError(t, err)
	assert.NotSame(t, a.Value, c.Value, "a released key starts afresh")
}

func TestCreateErrorStoresNothing(t *testing.T) {
	var m Refs[string, int]
	_, err := m.Acquire("x", func() (int, error) { return 0, errors.New("boom") }, nil)
	assert.Error(t, err)
	assert.Equal(t, 0, m.Len())
}

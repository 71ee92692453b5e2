package sharedcomponent

import "sync"

// Refs is for shared state that is not itself a component (the processor's metric window):
// each side holds a reference, and the value is dropped when the last side lets go. Map is
// for a component that must be started and shut down once (the receiver). The zero value is
// ready to use.
type Refs[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*entry[V]
}

type entry[V any] struct {
	value V
	refs  int
	close func(V)
}

// Ref is one user's hold on a shared value.
type Ref[V any] struct {
	Value   V
	release func()
	once    sync.Once
}

// Release gives the hold back; the last release removes the value from the map and calls its
// close function. Calling it more than once is harmless.
func (r *Ref[V]) Release() { r.once.Do(r.release) }

// Acquire returns the value for key, creating it with create when absent. close, if not nil,
// runs once when the last holder releases it.
func (m *Refs[K, V]) Acquire(key K, create func() (V, error), close func(V)) (*Ref[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = make(map[K]*entry[V])
	}
	e := m.m[key]
	if e == nil {
		v, err := create()
		if err != nil {
			return nil, err
		}
		e = &entry[V]{value: v, close: close}
		m.m[key] = e
	}
	e.refs++
	return &Ref[V]{Value: e.value, release: func() { m.release(key, e) }}, nil
}

func (m *Refs[K, V]) release(key K, e *entry[V]) {
	m.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last && m.m[key] == e {
		delete(m.m, key)
	}
	m.mu.Unlock()
	if last && e.close != nil {
		e.close(e.value)
	}
}

// Len returns how many values are live.
func (m *Refs[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

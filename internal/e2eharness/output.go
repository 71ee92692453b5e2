package e2eharness

import (
	"bytes"
	"sync"
)

// Output is a process's stdout and stderr together: exec's copying goroutine writes while a
// test reads it (a readiness check, a failure message).
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

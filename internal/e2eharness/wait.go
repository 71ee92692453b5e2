package e2eharness

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Watched is what WaitFor watches while it polls: a Process, or a test's type around one.
type Watched interface {
	Exited() bool
	Name() string
	Output() string
}

// WaitFor polls cond until it holds or timeout passes; it gives up early when p (which may
// be nil) has exited, and fails with p's output.
func WaitFor(t testing.TB, timeout time.Duration, p Watched, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		if p != nil && p.Exited() {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if p == nil {
		t.Fatalf("timed out waiting for %s", what)
	}
	t.Fatalf("timed out waiting for %s\n%s output:\n%s", what, p.Name(), p.Output())
}

// WaitListening waits until addr accepts a TCP connection; it fails when p exits first.
func WaitListening(t testing.TB, p Watched, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.Exited() {
			t.Fatalf("%s exited:\n%s", p.Name(), p.Output())
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not listening on %s within %s:\n%s", p.Name(), addr, timeout, p.Output())
}

// FreePort is a loopback TCP port nothing listened on a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeAddr is FreePort as host:port.
func FreeAddr(t testing.TB) string {
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t))
}

// FreeAddrs returns n distinct free loopback addresses. Each port is held until all are
// chosen: closed one by one, the kernel may hand the same port out twice.
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, 0, n)
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

package podresources

import (
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
)

// probe tells a gRPC server from a socket that hangs, one that answers garbage and one that
// is not there, without gRPC's client (and so without its log).
func TestProbe(t *testing.T) {
	dir := t.TempDir()
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); wg.Wait() })
	listen := func(name string, serve func(net.Conn)) string {
		path := filepath.Join(dir, name)
		l, err := net.Listen("unix", path)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				serve(c)
			}
		}()
		t.Cleanup(func() { _ = l.Close() })
		return path
	}
	grpcPath := filepath.Join(dir, "grpc.sock")
	l, err := net.Listen("unix", grpcPath)
	require.NoError(t, err)
	srv := grpc.NewServer()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)

	hang := listen("hang.sock", func(c net.Conn) {
		go func() { <-done; _ = c.Close() }() // holds the connection, answers nothing
	})
	garbage := listen("garbage.sock", func(c net.Conn) {
		_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
		go func() { <-done; _ = c.Close() }()
	})

	const timeout = 300 * time.Millisecond
	assert.NoError(t, probe(grpcPath, timeout), "a gRPC server answers the HTTP/2 preface")
	start := time.Now()
	assert.ErrorContains(t, probe(hang, timeout), "sent no HTTP/2 answer within 300ms")
	assert.Less(t, time.Since(start), time.Second, "bounded by the timeout")
	assert.ErrorContains(t, probe(garbage, timeout), "not as an HTTP/2 (gRPC) server")
	assert.ErrorContains(t, probe(filepath.Join(dir, "gone.sock"), timeout), "connect to PodResources socket")
}

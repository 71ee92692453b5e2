package podresources

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// http2Preface is what an HTTP/2 client sends first (RFC 9113 §3.4): the connection preface
// and an empty SETTINGS frame. A server answers with its own SETTINGS frame before anything
// else.
var http2Preface = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)

// probe checks, without gRPC, that an HTTP/2 server answers on the socket within timeout:
// it connects, sends the preface and reads the first frame's header, which must be a
// SETTINGS frame on stream 0. While the kubelet is gone, refuses the connection, hangs or
// answers garbage, gRPC's own client would log a transport warning at every reconnect
// attempt (to the collector's log, through the process-wide gRPC logger no component may
// change while others run); the probe fails quietly instead, and the source reports its
// state once.
func probe(socketPath string, timeout time.Duration) error {
	c, err := net.DialTimeout("unix", socketPath, timeout)
	if err != nil {
		return fmt.Errorf("connect to PodResources socket: %w", err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return fmt.Errorf("probe PodResources socket: %w", err)
	}
	if _, err := c.Write(http2Preface); err != nil {
		return fmt.Errorf("probe PodResources socket: %w", err)
	}
	var h [9]byte // length (3), type, flags, stream id (4)
	if _, err := io.ReadFull(c, h[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("PodResources socket accepted the connection but sent no HTTP/2 answer within %v", timeout)
		}
		return fmt.Errorf("probe PodResources socket: %w", err)
	}
	if h[3] != 4 || h[5]|h[6]|h[7]|h[8] != 0 {
		return errors.New("PodResources socket answered, but not as an HTTP/2 (gRPC) server")
	}
	return nil
}

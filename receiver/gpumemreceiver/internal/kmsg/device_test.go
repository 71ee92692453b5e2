package kmsg

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A character device other than /dev/kmsg may report EOF: the reader polls
// it rather than failing, and the poll ends with ctx.
func TestReaderDeviceEOFPolls(t *testing.T) {
	dev := &fakeDevice{reads: []any{io.EOF, io.EOF, "6,1,1,-;after two empty polls\n"}}
	r := newReader("/dev/x", dev, true, Options{PollInterval: testPoll})
	if got := nextWithin(t, r, promptly).Text; got != "after two empty polls" {
		t.Errorf("record = %q", got)
	}

	dev = &fakeDevice{reads: []any{io.EOF, "6,2,2,-;never reached\n"}}
	r = newReader("/dev/x", dev, true, Options{PollInterval: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := r.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %v, want the context's deadline", err)
	}
	if waited := time.Since(start); waited > promptly {
		t.Errorf("Next returned after %v: the poll sleep ignored ctx", waited)
	}
	if len(dev.reads) != 1 {
		t.Errorf("%d scripted reads left, want 1: Next read again after ctx ended", len(dev.reads))
	}
}

// An overrun while ctx ends stops Next with ctx's error instead of reading
// on; the overrun is still counted.
func TestReaderDeviceOverrunThenCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dev := &fakeDevice{reads: []any{
		func() error { cancel(); return syscall.EPIPE },
		"6,1,1,-;not to be read\n",
	}}
	r := newReader("/dev/kmsg", dev, true, Options{})
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next = %v, want context.Canceled", err)
	}
	if s := r.Stats(); s.Overruns != 1 {
		t.Errorf("Overruns = %d, want 1", s.Overruns)
	}
	if len(dev.reads) != 1 {
		t.Errorf("%d scripted reads left, want 1", len(dev.reads))
	}
}

// A read deadline left from an earlier call (ctx already gone) is cleared
// and the read retried; a deadline from the current ctx ends Next.
func TestReaderDeviceDeadline(t *testing.T) {
	dev := &fakeDevice{reads: []any{os.ErrDeadlineExceeded, "6,1,1,-;after a stale deadline\n"}}
	r := newReader("/dev/kmsg", dev, true, Options{})
	var cleared int
	dev.setOnDeadline(func(d time.Time) {
		if d.IsZero() {
			cleared++
		}
	})
	if got := nextWithin(t, r, promptly).Text; got != "after a stale deadline" {
		t.Errorf("record = %q", got)
	}
	dev.setOnDeadline(nil)
	// Once at the start of Next, once after the stale deadline fired.
	if cleared != 2 {
		t.Errorf("deadline cleared %d times, want 2", cleared)
	}

	ctx, cancel := context.WithCancel(context.Background())
	dev = &fakeDevice{reads: []any{
		func() error { cancel(); return os.ErrDeadlineExceeded },
		"6,2,2,-;not to be read\n",
	}}
	r = newReader("/dev/kmsg", dev, true, Options{})
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", err)
	}
}

// A read on a closed file (Close raced with Next) reports ErrClosed with
// the path, not a raw "file already closed".
func TestReaderDeviceReadAfterClose(t *testing.T) {
	dev := &fakeDevice{reads: []any{&fs.PathError{Op: "read", Path: "/dev/kmsg", Err: os.ErrClosed}}}
	r := newReader("/dev/kmsg", dev, true, Options{})
	_, err := r.Next(context.Background())
	if !errors.Is(err, ErrClosed) || !strings.HasPrefix(err.Error(), "read /dev/kmsg: ") {
		t.Errorf("Next = %v, want ErrClosed prefixed with the path", err)
	}
}

// Open seeks a character device to its end unless FromStart; a device
// that cannot seek fails Open with the path named. /dev/ptmx is a
// character device whose seek fails with ESPIPE.
func TestOpenDeviceSeek(t *testing.T) {
	const ptmx = "/dev/ptmx"
	if info, err := os.Stat(ptmx); err != nil || info.Mode()&fs.ModeCharDevice == 0 {
		t.Skipf("no %s character device", ptmx)
	}
	r, err := Open(ptmx, Options{})
	if err == nil {
		r.Close()
		t.Fatalf("Open(%s) seeked to the end of an unseekable device", ptmx)
	}
	if !errors.Is(err, syscall.ESPIPE) || !strings.Contains(err.Error(), "seek to the end of "+ptmx) {
		t.Errorf("Open(%s) = %v, want the seek's ESPIPE naming the path", ptmx, err)
	}
	r, err = Open(ptmx, Options{FromStart: true})
	if err != nil {
		t.Fatalf("Open(%s, FromStart) = %v: it must not seek", ptmx, err)
	}
	if !r.device {
		t.Errorf("%s not read as a device (one record per read)", ptmx)
	}
	r.Close()
}

// A device that fails to open (here /dev/tty without a controlling
// terminal: ENXIO) is reported as an open error, without the CAP_SYSLOG
// hint that only fits permission errors.
func TestOpenDeviceFails(t *testing.T) {
	f, err := os.OpenFile("/dev/tty", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		f.Close()
		t.Skip("/dev/tty opens: this test has a controlling terminal")
	}
	_, err = Open("/dev/tty", Options{FromStart: true})
	if err == nil || !strings.HasPrefix(err.Error(), "open kernel log: ") || strings.Contains(err.Error(), "CAP_SYSLOG") {
		t.Errorf("Open(/dev/tty) = %v, want an open error without the CAP_SYSLOG hint", err)
	}
}

func TestOpenErrorWraps(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "/dev/kmsg", Err: syscall.ENXIO}
	err := openError(cause)
	if !errors.Is(err, syscall.ENXIO) || errors.Is(err, fs.ErrPermission) || strings.Contains(err.Error(), "CAP_SYSLOG") {
		t.Errorf("openError(ENXIO) = %v, want it wrapped without the CAP_SYSLOG hint", err)
	}
}

package kmsg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// DefaultPollInterval is how often a regular file or a FIFO without a
	// writer is checked for new data when Options.PollInterval is zero.
	DefaultPollInterval = 200 * time.Millisecond
	// readBufSize exceeds the largest record /dev/kmsg returns (8 KiB with its
	// dictionary); a smaller buffer makes the read fail with EINVAL.
	readBufSize = 16 << 10
	// maxPending bounds a line without a newline in a file or FIFO; longer
	// garbage is dropped and counted as malformed.
	maxPending = 1 << 20
)

// ErrClosed is wrapped by Next's error once the Reader is closed.
var ErrClosed = fs.ErrClosed

// Options configure a Reader.
type Options struct {
	// FromStart makes a /dev/kmsg reader replay the records still in the
	// kernel's buffer. By default it starts at the end, so a restart does not
	// report old boot messages again. Files and FIFOs are always read from
	// their start.
	FromStart bool
	// PollInterval is how often a regular file, or a FIFO that has no writer,
	// is checked for new data (DefaultPollInterval when zero).
	PollInterval time.Duration
}

// Stats count what a Reader skipped.
type Stats struct {
	// Overruns counts EPIPE reads: the kernel overwrote records before they
	// were read.
	Overruns uint64
	// Lost counts records missing from the sequence numbers seen.
	Lost uint64
	// Malformed counts records or lines that did not parse and were skipped.
	Malformed uint64
}

// Reader delivers kernel log records from /dev/kmsg, a regular file or a
// FIFO. Next is for one goroutine at a time; Close and Stats may be called
// from any goroutine.
type Reader struct {
	path   string
	f      file
	device bool // a character device: one record per read
	poll   time.Duration
	buf    []byte

	// Stream (file, FIFO) state: bytes read but not yet split into lines,
	// and the record being assembled from its header line and its
	// continuation lines.
	pending []byte
	off     int
	rec     []byte
	drained bool // the last read came back short: no more data for now

	done      chan struct{}
	closeOnce sync.Once
	closeErr  error

	haveSeq   bool
	lastSeq   uint64
	overruns  atomic.Uint64
	lost      atomic.Uint64
	malformed atomic.Uint64
}

// Open opens path for reading. A permission error (reading /dev/kmsg needs
// CAP_SYSLOG when kernel.dmesg_restrict=1) matches errors.Is(err,
// fs.ErrPermission).
func Open(path string, opts Options) (*Reader, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open kernel log: %w", err)
	}
	mode := info.Mode()
	var flags int
	switch {
	case mode&fs.ModeCharDevice != 0, mode&fs.ModeNamedPipe != 0:
		// Non-blocking, so Go's poller waits for data and Close or a read
		// deadline can interrupt the wait; for a FIFO it also keeps open(2)
		// from blocking until a writer appears.
		flags = os.O_RDONLY | syscall.O_NONBLOCK
	case mode.IsRegular():
		flags = os.O_RDONLY
	default:
		return nil, fmt.Errorf("open kernel log %s: %s is not a character device, FIFO or regular file", path, mode.Type())
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, openError(err)
	}
	device := mode&fs.ModeCharDevice != 0
	if device && !opts.FromStart {
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			return nil, fmt.Errorf("seek to the end of %s: %w", path, err)
		}
	}
	return newReader(path, f, device, opts), nil
}

// file is what Reader needs of an *os.File; tests substitute it.
type file interface {
	io.ReadCloser
	io.Seeker
	SetReadDeadline(time.Time) error
	Stat() (fs.FileInfo, error)
}

func newReader(path string, f file, device bool, opts Options) *Reader {
	r := &Reader{
		path:   path,
		f:      f,
		device: device,
		poll:   opts.PollInterval,
		buf:    make([]byte, readBufSize),
		done:   make(chan struct{}),
	}
	if r.poll <= 0 {
		r.poll = DefaultPollInterval
	}
	return r
}

// openError wraps an open failure; a permission error names the capability
// it lacks and still matches errors.Is(err, fs.ErrPermission).
func openError(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("open kernel log: %w (reading it needs CAP_SYSLOG or root when kernel.dmesg_restrict=1)", err)
	}
	return fmt.Errorf("open kernel log: %w", err)
}

// Next returns the next record, waiting for one if need be. It returns
// ctx.Err() when ctx ends and an error wrapping ErrClosed once Close has
// been called, promptly in both cases, even while waiting on an empty
// /dev/kmsg or FIFO. Records that do not parse are skipped and counted.
func (r *Reader) Next(ctx context.Context) (Record, error) {
	if err := r.stopped(ctx); err != nil {
		return Record{}, err
	}
	// A blocking read only notices ctx through a read deadline. Clear one a
	// previous call may have left, and arrange one for when ctx ends.
	_ = r.f.SetReadDeadline(time.Time{})
	if ctx.Done() != nil {
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			_ = r.f.SetReadDeadline(time.Unix(1, 0))
			close(fired)
		})
		defer func() {
			if !stop() {
				<-fired // leave no goroutine behind
			}
		}()
	}
	if r.device {
		return r.nextDevice(ctx)
	}
	return r.nextStream(ctx)
}

// Close stops the Reader and unblocks a waiting Next. It is safe to call
// more than once and concurrently with Next.
func (r *Reader) Close() error {
	r.closeOnce.Do(func() {
		close(r.done)
		r.closeErr = r.f.Close()
	})
	return r.closeErr
}

// Stats returns what the Reader skipped so far.
func (r *Reader) Stats() Stats {
	return Stats{Overruns: r.overruns.Load(), Lost: r.lost.Load(), Malformed: r.malformed.Load()}
}

// stopped reports why Next must return, if it must.
func (r *Reader) stopped(ctx context.Context) error {
	select {
	case <-r.done:
		return fmt.Errorf("read %s: %w", r.path, ErrClosed)
	default:
	}
	return ctx.Err()
}

// readErr turns a read error into Next's error; nil means retry.
func (r *Reader) readErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Set by ctx's AfterFunc, possibly a stale one from an earlier call.
		if err := r.stopped(ctx); err != nil {
			return err
		}
		_ = r.f.SetReadDeadline(time.Time{})
		return nil
	case errors.Is(err, os.ErrClosed):
		return fmt.Errorf("read %s: %w", r.path, ErrClosed)
	}
	return fmt.Errorf("read %s: %w", r.path, err)
}

// wait sleeps for the poll interval, or until ctx ends or Close.
func (r *Reader) wait(ctx context.Context) error {
	t := time.NewTimer(r.poll)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.done:
		return fmt.Errorf("read %s: %w", r.path, ErrClosed)
	}
}

// noteSeq counts records missing between the last sequence number and seq.
// A lower seq (a reboot, a replayed file) starts counting afresh.
func (r *Reader) noteSeq(seq uint64) {
	if r.haveSeq && seq > r.lastSeq+1 {
		r.lost.Add(seq - r.lastSeq - 1)
	}
	r.haveSeq, r.lastSeq = true, seq
}

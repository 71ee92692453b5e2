package kmsg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testPoll keeps file-following tests fast.
const testPoll = 5 * time.Millisecond

// promptly bounds how long an unblocking Close or cancel may take; generous
// for loaded CI machines.
const promptly = 5 * time.Second

func nextWithin(t *testing.T, r *Reader, d time.Duration) Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	rec, err := r.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return rec
}

func texts(t *testing.T, r *Reader, n int) []string {
	t.Helper()
	var out []string
	for range n {
		out = append(out, nextWithin(t, r, promptly).Text)
	}
	return out
}

func TestReaderRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kmsg")
	data, err := os.ReadFile(filepath.Join("testdata", "records.kmsg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, Options{PollInterval: testPoll})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	var got []Record
	for range 7 {
		got = append(got, nextWithin(t, r, promptly))
	}
	if got[0].Seq != 0 || !strings.HasPrefix(got[0].Text, "Linux version") {
		t.Errorf("first record %+v, want the file's first", got[0])
	}
	if d := got[2].Dict; d["SUBSYSTEM"] != "pci" || d["DEVICE"] != "+pci:0000:00:03.1" {
		t.Errorf("dictionary lines not joined to their record: %+v", got[2])
	}
	if got[5].Text != "NVRM: Xid (PCI:0000:3b:00): 13, pid=2213, name=python train.py, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address" {
		t.Errorf("record 6 text %q", got[5].Text)
	}
	if got[6].Text != "user message with an escaped newline\nand a backslash \\" || got[6].Facility != 1 {
		t.Errorf("last record %+v", got[6])
	}
	if s := r.Stats(); s.Lost != 811 || s.Malformed != 0 {
		t.Errorf("Stats = %+v, want 811 lost (seq 0 then 812), none malformed", s)
	}

	// Appended records arrive, like tail -f; a malformed line is skipped.
	appendFile(t, path, "not a record\n6,900,1,-;appended one\n SUBSYSTEM=x\n6,901,2,-;appended two\n")
	if got := texts(t, r, 2); got[0] != "appended one" || got[1] != "appended two" {
		t.Errorf("appended records = %q", got)
	}
	if s := r.Stats(); s.Malformed != 1 {
		t.Errorf("Malformed = %d, want 1", s.Malformed)
	}

	// A record written in two parts is delivered once its line is complete.
	appendFile(t, path, "6,902,3,-;split ")
	appendFile(t, path, "record\n")
	if got := nextWithin(t, r, promptly).Text; got != "split record" {
		t.Errorf("split record = %q", got)
	}

	// copytruncate rotation: the file starts over.
	if err := os.WriteFile(path, []byte("6,1,1,-;after truncation\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := nextWithin(t, r, promptly).Text; got != "after truncation" {
		t.Errorf("after truncation = %q", got)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestReaderFileStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kmsg")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, Options{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := r.Next(ctx); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	expectErr(t, errc, context.Canceled)

	go func() { _, err := r.Next(context.Background()); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	expectErr(t, errc, ErrClosed)
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := r.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close = %v, want ErrClosed", err)
	}
}

func expectErr(t *testing.T, errc <-chan error, want error) {
	t.Helper()
	select {
	case err := <-errc:
		if !errors.Is(err, want) {
			t.Fatalf("Next = %v, want %v", err, want)
		}
	case <-time.After(promptly):
		t.Fatalf("Next still blocked after %v", promptly)
	}
}

func mkfifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kmsg.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

func TestReaderFIFO(t *testing.T) {
	path := mkfifo(t)
	// Open must not block although no writer exists yet.
	r, err := Open(path, Options{PollInterval: testPoll})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// One write per record, as a kmsg relay would do. The last record must
	// arrive without waiting for a record after it.
	for _, rec := range []string{"6,1,1,-;first\n SUBSYSTEM=pci\n", "6,2,2,-;second\n"} {
		if _, err := w.WriteString(rec); err != nil {
			t.Fatal(err)
		}
	}
	first := nextWithin(t, r, promptly)
	if first.Text != "first" || first.Dict["SUBSYSTEM"] != "pci" {
		t.Errorf("first = %+v", first)
	}
	if got := nextWithin(t, r, promptly).Text; got != "second" {
		t.Errorf("second = %q", got)
	}
	w.Close()

	// The writer went away; a new one is picked up.
	w, err = os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("6,3,3,-;third\n"); err != nil {
		t.Fatal(err)
	}
	if got := nextWithin(t, r, promptly).Text; got != "third" {
		t.Errorf("third = %q", got)
	}
}

func TestReaderFIFOBlockedReadUnblocks(t *testing.T) {
	path := mkfifo(t)
	r, err := Open(path, Options{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// A silent writer: the read blocks in the poller, not in a poll sleep.
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := r.Next(ctx); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	expectErr(t, errc, context.Canceled)

	// The cancelled read left no deadline behind.
	if _, err := w.WriteString("6,1,1,-;after cancel\n"); err != nil {
		t.Fatal(err)
	}
	if got := nextWithin(t, r, promptly).Text; got != "after cancel" {
		t.Errorf("after cancel = %q", got)
	}

	go func() { _, err := r.Next(context.Background()); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	expectErr(t, errc, ErrClosed)
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "not a character device") {
		t.Errorf("Open(directory) = %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want fs.ErrNotExist", err)
	}
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EPERM} {
		err := openError(&fs.PathError{Op: "open", Path: "/dev/kmsg", Err: errno})
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "CAP_SYSLOG") {
			t.Errorf("openError(%v) = %v", errno, err)
		}
	}
}

func TestOpenPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root bypasses file permissions")
	}
	path := filepath.Join(t.TempDir(), "kmsg")
	if err := os.WriteFile(path, nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{}); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "CAP_SYSLOG") {
		t.Errorf("Open = %v, want a permission error naming CAP_SYSLOG", err)
	}
}

// fakeDevice returns scripted reads, as /dev/kmsg would.
type fakeDevice struct {
	// string: one record; error: a failed read; func() error: called, and
	// its error is the read's. Past the script a read fails with
	// os.ErrClosed.
	reads []any

	mu sync.Mutex
	// onDeadline, when set, sees every SetReadDeadline (also from the
	// goroutine context.AfterFunc runs).
	onDeadline func(time.Time)
}

func (f *fakeDevice) Read(p []byte) (int, error) {
	if len(f.reads) == 0 {
		return 0, os.ErrClosed
	}
	next := f.reads[0]
	f.reads = f.reads[1:]
	switch next := next.(type) {
	case error:
		return 0, next
	case func() error:
		return 0, next()
	}
	return copy(p, next.(string)), nil
}
func (f *fakeDevice) Close() error                   { return nil }
func (f *fakeDevice) Seek(int64, int) (int64, error) { return 0, nil }
func (f *fakeDevice) SetReadDeadline(t time.Time) error {
	f.mu.Lock()
	hook := f.onDeadline
	f.mu.Unlock()
	if hook != nil {
		hook(t)
	}
	return nil
}
func (f *fakeDevice) setOnDeadline(hook func(time.Time)) {
	f.mu.Lock()
	f.onDeadline = hook
	f.mu.Unlock()
}
func (f *fakeDevice) Stat() (fs.FileInfo, error) { return nil, errors.ErrUnsupported }
func (f *fakeDevice) String() string             { return fmt.Sprint(len(f.reads)) }

func TestReaderDeviceOverrun(t *testing.T) {
	dev := &fakeDevice{reads: []any{
		"6,10,1,-;before\n",
		&fs.PathError{Op: "read", Path: "/dev/kmsg", Err: syscall.EPIPE},
		"6,15,2,-;after\n",
		"garbage",
		"6,16,3,-;last\n",
		&fs.PathError{Op: "read", Path: "/dev/kmsg", Err: syscall.EIO},
	}}
	r := newReader("/dev/kmsg", dev, true, Options{})
	if got := texts(t, r, 3); strings.Join(got, ",") != "before,after,last" {
		t.Errorf("records = %q", got)
	}
	if s := r.Stats(); s.Overruns != 1 || s.Lost != 4 || s.Malformed != 1 {
		t.Errorf("Stats = %+v, want 1 overrun, 4 lost, 1 malformed", s)
	}
	if _, err := r.Next(context.Background()); !errors.Is(err, syscall.EIO) {
		t.Errorf("Next = %v, want EIO", err)
	}
}

// TestReaderDevKmsg reads the real /dev/kmsg where the test may: it writes
// a marker and expects it, and no replay of the boot messages.
func TestReaderDevKmsg(t *testing.T) {
	r, err := Open("/dev/kmsg", Options{})
	if err != nil {
		t.Skipf("cannot read /dev/kmsg: %v", err)
	}
	defer r.Close()
	w, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("cannot write /dev/kmsg: %v", err)
	}
	marker := fmt.Sprintf("gpumem kmsg reader test %d", time.Now().UnixNano())
	_, err = w.WriteString("<7>" + marker + "\n")
	w.Close()
	if err != nil {
		t.Skipf("cannot write /dev/kmsg: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), promptly)
	defer cancel()
	for {
		rec, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("marker not seen: %v", err)
		}
		if rec.Seq == 0 {
			t.Fatalf("replayed the boot messages: %+v", rec)
		}
		if strings.Contains(rec.Text, marker) {
			if rec.Level != 7 || rec.Facility != 1 {
				t.Errorf("marker record %+v, want level 7, facility 1 (user)", rec)
			}
			break
		}
	}

	// A blocked read on the device stops on Close.
	errc := make(chan error, 1)
	go func() { _, err := r.Next(context.Background()); errc <- err }()
	time.Sleep(20 * time.Millisecond)
	r.Close()
	expectErr(t, errc, ErrClosed)
}

// A zero or negative PollInterval means DefaultPollInterval; a positive one
// is kept.
func TestPollInterval(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		0: DefaultPollInterval, -time.Second: DefaultPollInterval, time.Nanosecond: time.Nanosecond, testPoll: testPoll,
	} {
		if got := newReader("x", &fakeDevice{}, false, Options{PollInterval: in}).poll; got != want {
			t.Errorf("PollInterval %v: poll every %v, want %v", in, got, want)
		}
	}
}

// Sequence numbers: consecutive ones lose nothing, a gap counts the
// missing records, a lower one (a reboot, a file replayed) starts afresh.
func TestNoteSeq(t *testing.T) {
	r := newReader("x", &fakeDevice{}, false, Options{})
	for _, seq := range []uint64{5, 6, 7, 10, 3, 4, 4, 6} {
		r.noteSeq(seq)
	}
	if got := r.Stats().Lost; got != 2+1 {
		t.Errorf("Lost = %d, want 3 (8, 9 and 5)", got)
	}
}

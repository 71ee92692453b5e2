package kmsg

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func writeKmsgFile(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kmsg")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openFile(t *testing.T, path string, poll time.Duration) *Reader {
	t.Helper()
	r, err := Open(path, Options{PollInterval: poll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// expectNothing checks that Next has no record for now.
func expectNothing(t *testing.T, r *Reader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if rec, err := r.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next = %+v, %v; want no record yet", rec, err)
	}
}

// recordOfLen returns a valid record line of exactly n bytes, newline not
// counted.
func recordOfLen(seq, n int) string {
	head := "6," + strconv.Itoa(seq) + ",1,-;"
	return head + strings.Repeat("x", n-len(head))
}

// Blank lines are skipped; a dictionary line with no record before it is
// counted as malformed and the record after it still arrives.
func TestStreamBlankAndOrphanLines(t *testing.T) {
	path := writeKmsgFile(t, " SUBSYSTEM=pci\n\n6,1,1,-;a\n\n\n6,2,2,-;b\n DEVICE=+pci:0000:3b:00.0\n")
	r := openFile(t, path, testPoll)
	a := nextWithin(t, r, promptly)
	b := nextWithin(t, r, promptly)
	if a.Text != "a" || a.Dict != nil {
		t.Errorf("first record %+v, want text a without a dictionary", a)
	}
	if b.Text != "b" || b.Dict["DEVICE"] != "+pci:0000:3b:00.0" {
		t.Errorf("second record %+v, want b with its dictionary", b)
	}
	if s := r.Stats(); s.Malformed != 1 || s.Lost != 0 {
		t.Errorf("Stats = %+v, want 1 malformed (the orphan), none lost", s)
	}
}

// A record whose dictionary line comes in the next read still gets it when
// the first read filled the buffer: a full read is not a pause.
func TestStreamDictionaryAcrossFullRead(t *testing.T) {
	first := recordOfLen(1, readBufSize-1) + "\n" // exactly one buffer
	path := writeKmsgFile(t, first+" SUBSYSTEM=pci\n6,2,2,-;next\n")
	r := openFile(t, path, testPoll)
	rec := nextWithin(t, r, promptly)
	if rec.Seq != 1 || rec.Dict["SUBSYSTEM"] != "pci" {
		t.Errorf("record %d dict %v, want seq 1 with SUBSYSTEM=pci", rec.Seq, rec.Dict)
	}
	if got := nextWithin(t, r, promptly).Text; got != "next" {
		t.Errorf("second record = %q", got)
	}
	if s := r.Stats(); s.Malformed != 0 {
		t.Errorf("Malformed = %d, want 0", s.Malformed)
	}
}

// The last record of a file that ends exactly at a buffer boundary is
// delivered at EOF, without waiting a poll interval for more.
func TestStreamLastRecordAtEOF(t *testing.T) {
	path := writeKmsgFile(t, "6,1,1,-;a\n"+recordOfLen(2, readBufSize-len("6,1,1,-;a\n")-1)+"\n")
	r := openFile(t, path, time.Hour)
	if got := nextWithin(t, r, promptly).Seq; got != 1 {
		t.Errorf("first seq = %d", got)
	}
	if got := nextWithin(t, r, promptly).Seq; got != 2 {
		t.Errorf("second seq = %d", got)
	}
}

// A record line of maxPending bytes is still read; an unterminated line
// past maxPending is dropped and counted as soon as it is seen, and the
// records after it arrive.
func TestStreamPendingBound(t *testing.T) {
	path := writeKmsgFile(t, recordOfLen(1, maxPending)+"\n")
	r := openFile(t, path, testPoll)
	if rec := nextWithin(t, r, promptly); rec.Seq != 1 || len(rec.Text) != maxPending-len("6,1,1,-;") {
		t.Errorf("record of maxPending bytes: seq %d, %d text bytes", rec.Seq, len(rec.Text))
	}

	path = writeKmsgFile(t, strings.Repeat("x", maxPending+1))
	r = openFile(t, path, testPoll)
	expectNothing(t, r)
	if s := r.Stats(); s.Malformed != 1 {
		t.Errorf("Malformed = %d after an unterminated line of maxPending+1 bytes, want 1", s.Malformed)
	}
	if n := len(r.pending); n != 0 {
		t.Errorf("%d bytes still pending after the drop", n)
	}
	appendFile(t, path, "\n6,2,2,-;after the garbage\n")
	if got := nextWithin(t, r, promptly).Text; got != "after the garbage" {
		t.Errorf("record = %q", got)
	}
	if s := r.Stats(); s.Malformed != 1 {
		t.Errorf("Malformed = %d, want still 1", s.Malformed)
	}
}

// A regular file that does not shrink is not read again from its start.
func TestStreamNoReplayAtEOF(t *testing.T) {
	path := writeKmsgFile(t, "6,1,1,-;once\n")
	r := openFile(t, path, testPoll)
	if got := nextWithin(t, r, promptly).Text; got != "once" {
		t.Fatalf("record = %q", got)
	}
	expectNothing(t, r) // several EOF polls at size == offset
	appendFile(t, path, "6,2,2,-;twice\n")
	if got := nextWithin(t, r, promptly).Text; got != "twice" {
		t.Errorf("record = %q, want the appended one", got)
	}
}

// When ctx ends while a failed read is being retried, Next returns ctx's
// error instead of reading on.
func TestStreamRetryStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeDevice{}
	f.reads = []any{
		func() error {
			// readErr clears the stale deadline before it retries: end ctx there.
			f.setOnDeadline(func(d time.Time) {
				if d.IsZero() {
					cancel()
				}
			})
			return os.ErrDeadlineExceeded
		},
		"6,1,1,-;not to be read\n",
	}
	r := newReader("kmsg.fifo", f, false, Options{})
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next = %v, want context.Canceled", err)
	}
	if len(f.reads) != 1 {
		t.Errorf("%d scripted reads left, want 1", len(f.reads))
	}
}

// A stream whose Stat fails at EOF (not a regular file we can check) is
// not rewound, and Next keeps polling.
func TestStreamEOFStatFails(t *testing.T) {
	f := &fakeDevice{reads: []any{"6,1,1,-;a\n", io.EOF, "6,2,2,-;b\n"}}
	r := newReader("kmsg.fifo", f, false, Options{PollInterval: testPoll})
	if got := texts(t, r, 2); strings.Join(got, ",") != "a,b" {
		t.Errorf("records = %q", got)
	}
}

// A record is not complete while a partial line follows it: that line may
// be its dictionary, still being written.
func TestStreamPartialContinuation(t *testing.T) {
	path := writeKmsgFile(t, "6,1,1,-;a\n SUBSYS")
	r := openFile(t, path, testPoll)
	expectNothing(t, r)
	appendFile(t, path, "TEM=pci\n")
	if rec := nextWithin(t, r, promptly); rec.Text != "a" || rec.Dict["SUBSYSTEM"] != "pci" {
		t.Errorf("record %+v, want a with SUBSYSTEM=pci", rec)
	}
}

// Consumed bytes do not count toward the pending bound: overlong garbage
// after a record is dropped, and the record before it still delivered.
func TestStreamPendingBoundAfterRecord(t *testing.T) {
	path := writeKmsgFile(t, "6,1,1,-;a\n"+strings.Repeat("x", maxPending+1))
	r := openFile(t, path, testPoll)
	if got := nextWithin(t, r, promptly).Text; got != "a" {
		t.Errorf("record = %q", got)
	}
	if s := r.Stats(); s.Malformed != 1 {
		t.Errorf("Malformed = %d, want 1 (the garbage)", s.Malformed)
	}
}

// After copytruncate, a partial line left from the old file is not glued
// onto the new file's first line.
func TestStreamTruncationDropsPartialLine(t *testing.T) {
	path := writeKmsgFile(t, "6,1,1,-;a\n")
	r := openFile(t, path, testPoll)
	if got := nextWithin(t, r, promptly).Text; got != "a" {
		t.Fatalf("record = %q", got)
	}
	appendFile(t, path, "6,5,5,-;half written")
	expectNothing(t, r)
	if err := os.WriteFile(path, []byte("6,1,1,-;fresh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if rec := nextWithin(t, r, promptly); rec.Text != "fresh" || rec.Seq != 1 {
		t.Errorf("record after truncation %+v, want seq 1 \"fresh\"", rec)
	}
}

package kmsg

import (
	"bytes"
	"context"
	"errors"
	"io"
)

// nextStream reads newline-separated records from a regular file or a FIFO.
// Lines starting with a space continue the record before them. A record is
// complete when the next record's line arrives or, failing that, when a read
// came back short (no more data for now) and ended at a line boundary:
// writers are expected to write a record and its dictionary lines in one
// write (atomic on a FIFO up to PIPE_BUF). Dictionary lines arriving after
// such a pause have no record left to join and are counted as malformed.
func (r *Reader) nextStream(ctx context.Context) (Record, error) {
	for {
		if rec, ok := r.takeRecord(); ok {
			return rec, nil
		}
		if r.drained && r.off == len(r.pending) {
			if rec, ok := r.flushRecord(); ok {
				return rec, nil
			}
		}
		r.compact()
		n, err := r.f.Read(r.buf)
		r.drained = n < len(r.buf)
		if n > 0 {
			r.pending = append(r.pending, r.buf[:n]...)
			if len(r.pending) > maxPending && bytes.IndexByte(r.pending, '\n') < 0 {
				r.pending = r.pending[:0]
				r.malformed.Add(1)
			}
			continue
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if r.off == len(r.pending) {
				if rec, ok := r.flushRecord(); ok {
					return rec, nil
				}
			}
			r.rewindIfTruncated()
			if err := r.wait(ctx); err != nil {
				return Record{}, err
			}
		default:
			if err := r.readErr(ctx, err); err != nil {
				return Record{}, err
			}
		}
		if err := r.stopped(ctx); err != nil {
			return Record{}, err
		}
	}
}

// takeRecord consumes complete lines and returns a record once the line of
// the record after it shows that it is complete.
func (r *Reader) takeRecord() (Record, bool) {
	for {
		i := bytes.IndexByte(r.pending[r.off:], '\n')
		if i < 0 {
			return Record{}, false
		}
		line := r.pending[r.off : r.off+i]
		r.off += i + 1
		switch {
		case len(line) == 0:
		case line[0] == ' ':
			if len(r.rec) == 0 {
				r.malformed.Add(1) // a continuation with nothing to continue
				continue
			}
			r.rec = append(r.rec, '\n')
			r.rec = append(r.rec, line...)
		case len(r.rec) == 0:
			r.rec = append(r.rec, line...)
		default:
			rec, ok := r.flushRecord()
			r.rec = append(r.rec[:0], line...)
			if ok {
				return rec, true
			}
		}
	}
}

// flushRecord parses and clears the record being assembled.
func (r *Reader) flushRecord() (Record, bool) {
	if len(r.rec) == 0 {
		return Record{}, false
	}
	rec, err := ParseRecord(r.rec)
	r.rec = r.rec[:0]
	if err != nil {
		r.malformed.Add(1)
		return Record{}, false
	}
	r.noteSeq(rec.Seq)
	return rec, true
}

// compact drops consumed bytes so pending does not grow without bound.
func (r *Reader) compact() {
	if r.off == 0 {
		return
	}
	n := copy(r.pending, r.pending[r.off:])
	r.pending = r.pending[:n]
	r.off = 0
}

// rewindIfTruncated starts a regular file over when it shrank below the read
// offset (copytruncate log rotation).
func (r *Reader) rewindIfTruncated() {
	info, err := r.f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return
	}
	pos, err := r.f.Seek(0, io.SeekCurrent)
	if err != nil || info.Size() >= pos {
		return
	}
	if _, err := r.f.Seek(0, io.SeekStart); err == nil {
		r.pending, r.off, r.rec = r.pending[:0], 0, r.rec[:0]
	}
}

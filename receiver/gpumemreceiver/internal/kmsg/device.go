package kmsg

import (
	"context"
	"errors"
	"io"
	"syscall"
)

// nextDevice reads /dev/kmsg, where each read returns exactly one record.
func (r *Reader) nextDevice(ctx context.Context) (Record, error) {
	for {
		n, err := r.f.Read(r.buf)
		switch {
		case err == nil:
			rec, perr := ParseRecord(r.buf[:n])
			if perr != nil {
				r.malformed.Add(1)
				continue
			}
			r.noteSeq(rec.Seq)
			return rec, nil
		case errors.Is(err, syscall.EPIPE):
			// Records were overwritten before we read them; the kernel has
			// moved us to the oldest one left. The sequence gap counts them.
			r.overruns.Add(1)
		case errors.Is(err, io.EOF):
			// Not expected from /dev/kmsg; another character device may.
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

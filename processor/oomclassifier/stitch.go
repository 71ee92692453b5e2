package oomclassifier

import (
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/parse"
)

// This file stitches an OOM message a log shipper split over several records (one per
// line: a file or container log read without a multiline rule, a wrapped paste) back
// together, so that its numbers are not lost. Every record still passes through as it came:
// only the head, the record holding the recognised OOM, gets the numbers read from the
// stitched text. The continuations keep their bodies and get no attribute.

const (
	// stitchWindow: the lines of one message are written together; a record more than this
	// after the head (by its timestamp, else its observed time) is a later event.
	stitchWindow = 2 * time.Second
	// stitchMaxRecords bounds the continuations read: a PyTorch message listing sixteen
	// processes wraps to about twenty lines.
	stitchMaxRecords = 48
	// stitchMaxBytes bounds the stitched text; the parser reads at most 4 KiB past an anchor.
	stitchMaxBytes = 16 << 10
	// stitchMaxStale ends the message after this many lines in a row that added nothing: a
	// wrap can hold a number back one line ("1.25 GiB is reserved" | "by PyTorch but
	// unallocated"), but three lines stating nothing are the traceback or the next event.
	// It also bounds the re-parsing a stream of long lines after a head costs.
	stitchMaxStale = 3
)

// sourceKeys are the record attributes that name a log stream within one resource: the
// file (filelog), the container's stdout or stderr (container parser), the process.
var sourceKeys = [...]string{"log.file.path", "log.file.name", "log.iostream", attrProcessPID}

// criPartial is the container parser's logtag of a line the runtime cut at 16 KiB: the next
// record continues it without a newline in between.
const criPartial = "P"

// stitch extends o, recognised in record head of the scope sx indexes, with the records of
// the same stream that follow it, and keeps the stitched reading when it states more than the
// head alone. Records of other streams in between are skipped, not stopped at: two files'
// lines interleave in one batch. The same stream's first record that is not a continuation
// (an OOM or Xid line of its own, no text, too late) ends the message. The records are
// reached through sx's per-stream links, so a head costs its own stream's records only, never
// a scan over the other streams' (which made a batch of n heads from n streams cost n²).
func stitch(o *oomRecord, sx *streams, head int) {
	if o.text == "" {
		return
	}
	lrs := sx.lrs
	rec := lrs.At(head)
	at := recordTime(rec)
	var b strings.Builder // o.text and the lines read; written from the first line read on
	best, bestScore, used := o.msg, score(o.msg), 0
	n, stale, size := 0, 0, len(o.text)
	prev := rec
	for i := sx.next(head); i >= 0 && n < stitchMaxRecords; i = sx.next(i) {
		next := lrs.At(i)
		line := firstText(next)
		if line == "" || !near(at, next) || size+len(line)+1 > stitchMaxBytes {
			break
		}
		if _, ok := parse.ParseOnHost(line, o.host); ok {
			break // a new OOM: its own head
		}
		if _, ok := xid.ParseLine(line); ok {
			break
		}
		if n++; n == 1 {
			b.WriteString(o.text)
		}
		if str(prev.Attributes(), "logtag") != criPartial {
			b.WriteByte('\n')
		}
		b.WriteString(line)
		size, prev = b.Len(), next
		m, ok := parse.ParseOnHost(b.String(), o.host)
		// More stated is better; on a tie the shorter stitch (the first that said it all).
		if s := score(m); ok && m.Framework == o.msg.Framework && s > bestScore {
			best, bestScore, used, stale = m, s, n, 0
			continue
		}
		if stale++; stale >= stitchMaxStale {
			break
		}
	}
	if used == 0 {
		return
	}
	o.msg = best
	if best.PID >= 0 { // the message's pid outranks the record's, as in findOOM
		o.pid = best.PID
	}
	o.stitchNote = "Read from this record and the " + strconv.Itoa(used) + " that followed it in the same log stream."
}

// score counts what a reading states: each known number and each listed process.
func score(m parse.Result) int {
	n := len(m.OtherProcesses) + len(m.CandidateProcesses)
	for _, v := range [...]int64{m.RequestedBytes, m.TotalBytes, m.FreeBytes, m.AllocatedBytes,
		m.ReservedBytes, m.ProcessBytes, m.LimitBytes, int64(m.DeviceIndex), int64(m.PID)} {
		if v >= 0 {
			n++
		}
	}
	return n
}

// near reports whether rec was logged within stitchWindow after at. Records with no time at
// all are taken as near: they arrived together in one batch.
func near(at time.Time, rec plog.LogRecord) bool {
	if rec.Timestamp() == 0 && rec.ObservedTimestamp() == 0 {
		return true
	}
	d := recordTime(rec).Sub(at)
	return d >= -stitchWindow && d <= stitchWindow
}

// firstText is the record's text where a message lives (string body, else a map body's
// message key).
func firstText(rec plog.LogRecord) string {
	var s string
	eachText(rec, false, func(t string) bool {
		s = t
		return true
	})
	return s
}

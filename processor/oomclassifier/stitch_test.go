package oomclassifier

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// splitOOM is pytorchOOM as a shipper without a multiline rule delivers a wrapped print of
// it: one record per line.
var splitOOM = []string{
	"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB.",
	"GPU 0 has a total capacity of 39.39 GiB of which 2.06 GiB is free.",
	"Process 3101 has 30.01 GiB memory in use. Process 3377 has 7.30 GiB memory in use.",
	"Of the allocated memory 28.00 GiB is allocated by PyTorch, and 1.25 GiB is reserved",
	"by PyTorch but unallocated.",
}

// fileLine is a record as filelog makes it: the line, the file's name, the observed time.
type fileLine struct {
	file string
	at   time.Duration // after t0
	line string
	tag  string // the container parser's logtag, "" none
}

func fileLogs(lines ...fileLine) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(resHostName, "n")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for _, l := range lines {
		r := lrs.AppendEmpty()
		r.SetObservedTimestamp(pcommon.NewTimestampFromTime(t0.Add(l.at)))
		r.Body().SetStr(l.line)
		r.Attributes().PutStr("log.file.name", l.file)
		if l.tag != "" {
			r.Attributes().PutStr("logtag", l.tag)
		}
	}
	return ld
}

func lines(file string, at time.Duration, ls ...string) []fileLine {
	out := make([]fileLine, len(ls))
	for i, l := range ls {
		out[i] = fileLine{file: file, at: at, line: l}
	}
	return out
}

// consumeAll runs ld through a processor without metrics and returns the output records with
// the input's, marshalled one by one, for the pass-through checks.
func consumeAll(t *testing.T, ld plog.Logs) (out, in []plog.LogRecord) {
	t.Helper()
	copyIn := plog.NewLogs()
	ld.CopyTo(copyIn)
	p := newProcessors(t, testConfig(0), nopSettings())
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
	require.Len(t, p.lsink.AllLogs(), 1)
	recs := func(ld plog.Logs) []plog.LogRecord {
		var rs []plog.LogRecord
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := 0; i < lrs.Len(); i++ {
			rs = append(rs, lrs.At(i))
		}
		return rs
	}
	return recs(p.lsink.AllLogs()[0]), recs(copyIn)
}

// TestStitchSplitOOM: the head of a split message gets every number of the whole message,
// while every record, continuations and another file's lines in between, leaves in order
// with its body and attributes as they came.
func TestStitchSplitOOM(t *testing.T) {
	var ls []fileLine
	ls = append(ls, fileLine{file: "train.log", line: "INFO step 1200 loss=0.314"})
	ls = append(ls, lines("train.log", 0, splitOOM[:2]...)...)
	ls = append(ls, fileLine{file: "other.log", line: "GET /healthz 200 0.4ms"})
	ls = append(ls, lines("train.log", 100*time.Millisecond, splitOOM[2:]...)...)
	ls = append(ls, fileLine{file: "train.log", at: 200 * time.Millisecond, line: "Traceback ends here"})
	out, in := consumeAll(t, fileLogs(ls...))
	require.Len(t, out, len(in), "no record dropped or added")

	head := out[1].Attributes().AsRaw()
	assert.Equal(t, "pytorch", head[attrFramework])
	for k, want := range map[string]int64{
		attrRequestedBytes: 4 * gib, attrTotalBytes: gibs(39.39), attrFreeBytes: gibs(2.06),
		attrAllocatedBytes: 28 * gib, attrReservedBytes: 28*gib + gib + gib/4, attrProcessBytes: gibs(30.01),
	} {
		assert.Equal(t, want, head[k], k)
	}
	assert.Equal(t, []any{map[string]any{attrProcessPID: int64(3377), keyBytes: gibs(7.30)}}, head[attrOtherProcesses])
	assert.Contains(t, head[attrEvidence], "Read from this record and the 4 that followed it in the same log stream.")

	for i := range in {
		assert.Equal(t, in[i].Body().AsRaw(), out[i].Body().AsRaw(), "record %d's body", i)
		if i == 1 {
			continue // the head: enriched
		}
		assert.Equal(t, in[i].Attributes().AsRaw(), out[i].Attributes().AsRaw(), "record %d's attributes", i)
	}
}

// TestStitchStops: what is not a continuation is not read into the head.
func TestStitchStops(t *testing.T) {
	tail := splitOOM[1:]
	tests := []struct {
		name string
		ls   []fileLine
	}{
		{"another file", append(lines("train.log", 0, splitOOM[0]), lines("other.log", 0, tail...)...)},
		{"too late", append(lines("train.log", 0, splitOOM[0]), lines("train.log", 10*time.Second, tail...)...)},
		{"a second OOM first", append(lines("train.log", 0, splitOOM[0], "RuntimeError: CUDA error: out of memory"),
			lines("train.log", 0, tail...)...)},
		{"a record without text", append(lines("train.log", 0, splitOOM[0], ""), lines("train.log", 0, tail...)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, in := consumeAll(t, fileLogs(tt.ls...))
			require.Len(t, out, len(in))
			head := out[0].Attributes().AsRaw()
			assert.Equal(t, 4*gib, head[attrRequestedBytes])
			assert.NotContains(t, head, attrFreeBytes, "nothing stitched")
			assert.NotContains(t, head[attrEvidence], "Read from this record")
		})
	}
}

// TestStitchCRIPartial: a line the container runtime cut (logtag P) continues without a newline.
func TestStitchCRIPartial(t *testing.T) {
	whole := strings.Join(splitOOM, " ")
	cut := strings.Index(whole, "39.39") + 3 // inside a number: "39.3" | "9 GiB"
	ls := []fileLine{
		{file: "c.log", line: whole[:cut], tag: "P"},
		{file: "c.log", line: whole[cut:], tag: "F"},
	}
	out, _ := consumeAll(t, fileLogs(ls...))
	assert.Equal(t, gibs(39.39), out[0].Attributes().AsRaw()[attrTotalBytes])
}

// gibs is what a message's "X GiB" converts to: rounded to the nearest byte.
func gibs(v float64) int64 { return int64(math.Round(v * float64(gib))) }

// benchStitch measures stitch on a head followed by the given continuation lines.
func benchStitch(b *testing.B, cont []string) {
	ld := fileLogs(append(lines("a.log", 0, splitOOM[0]), lines("a.log", 0, cont...)...)...)
	lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	base, ok := findOOM(lrs.At(0), ld.ResourceLogs().At(0).Resource().Attributes())
	if !ok {
		b.Fatal("head not recognised")
	}
	b.ReportAllocs()
	for b.Loop() {
		o, sx := base, newStreams(lrs)
		stitch(&o, &sx, 0)
	}
}

// BenchmarkStitchSplitMessage: the common case, a five-line PyTorch message.
func BenchmarkStitchSplitMessage(b *testing.B) { benchStitch(b, splitOOM[1:]) }

// BenchmarkStitchWorstCase: a head followed by 47 lines of ~680 bytes that state nothing,
// a traceback: the stitcher reads three and stops (stitchMaxStale).
func BenchmarkStitchWorstCase(b *testing.B) {
	cont := make([]string, stitchMaxRecords-1)
	for i := range cont {
		cont[i] = strings.Repeat("  File \"/usr/lib/python3/site-packages/x.py\", line 12, in f ", 11)
	}
	benchStitch(b, cont)
}

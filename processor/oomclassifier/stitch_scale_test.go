package oomclassifier

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// distinctHeads is one batch of n minimal OOM lines, each from its own file: the shape that
// made the stitcher quadratic (every head scanned every later record of the other streams).
func distinctHeads(n int) plog.Logs {
	ls := make([]fileLine, n)
	for i := range ls {
		ls[i] = fileLine{file: "f" + strconv.Itoa(i) + ".log", line: "RuntimeError: CUDA error: out of memory"}
	}
	return fileLogs(ls...)
}

func scopeRecords(ld plog.Logs) plog.LogRecordSlice {
	return ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
}

// recogniseAll finds the heads of one scope's records as the processor's scan does.
func recogniseAll(lrs plog.LogRecordSlice) (heads []oomRecord, at []int) {
	res := plog.NewResourceLogs().Resource().Attributes()
	var o oomRecord
	for k := 0; k < lrs.Len(); k++ {
		if findOOMInto(lrs.At(k), res, &o) {
			heads, at = append(heads, o), append(at, k)
			o = oomRecord{}
		}
	}
	return heads, at
}

// stitchAll stitches the heads recogniseAll found, in order, and returns the streams' work.
func stitchAll(lrs plog.LogRecordSlice, heads []oomRecord, at []int) int {
	sx := newStreams(lrs)
	for i := range heads {
		stitch(&heads[i], &sx, at[i])
	}
	return sx.work
}

// stitchBatch recognises and stitches one scope's heads, as the processor's scan does.
func stitchBatch(lrs plog.LogRecordSlice) (heads []oomRecord, work int) {
	heads, at := recogniseAll(lrs)
	return heads, stitchAll(lrs, heads, at)
}

// TestStitchDistinctStreamsLinear: 32,000 heads from 32,000 streams in one batch (1.3 MB of
// minimal lines) cost one index step per record and one link per head, and take well under a
// second (they took 34 s when each head scanned the records of every other stream).
func TestStitchDistinctStreamsLinear(t *testing.T) {
	const n = 32000
	lrs := scopeRecords(distinctHeads(n))
	heads, at := recogniseAll(lrs)
	require.Len(t, heads, n)
	best := time.Duration(1 << 62)
	for range 3 { // the best of three: a loaded machine slows a run, it never speeds one up
		hs := append([]oomRecord(nil), heads...)
		start := time.Now()
		work := stitchAll(lrs, hs, at)
		best = min(best, time.Since(start))
		assert.LessOrEqual(t, work, 2*n, "the work is linear: each record indexed once, each head one link")
	}
	assert.Less(t, best, time.Second, "stitching 32,000 heads in one batch")
	t.Logf("stitching 32,000 heads from distinct streams: %v", best)
}

// TestStitchInterleavedStreams: the links find each stream's continuations across the other
// streams' lines: 2,000 split messages interleaved line by line (every head first, then every
// second line, ...) each come out whole, at linear cost.
func TestStitchInterleavedStreams(t *testing.T) {
	const streams = 2000
	var ls []fileLine
	for _, line := range splitOOM {
		for s := range streams {
			ls = append(ls, fileLine{file: "f" + strconv.Itoa(s) + ".log", line: line})
		}
	}
	heads, work := stitchBatch(scopeRecords(fileLogs(ls...)))
	require.Len(t, heads, streams)
	for i, h := range heads {
		require.Equal(t, gibs(2.06), h.msg.FreeBytes, "head %d", i)
		require.Equal(t, "Read from this record and the 4 that followed it in the same log stream.", h.stitchNote)
	}
	// Each record indexed once; each head follows its four links and the one that ends it.
	assert.LessOrEqual(t, work, len(ls)+streams*len(splitOOM))
}

// TestStitchSourceKeyTypes: a stream is told by equal values of equal type, as Value.Equal
// tells them: an int pid and a string pid differ, a NaN equals nothing, -0 equals 0; and so
// when every stream's hash collides.
func TestStitchSourceKeyTypes(t *testing.T) {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	add := func(set func(a pcommon.Map)) { set(lrs.AppendEmpty().Attributes()) }
	add(func(a pcommon.Map) { a.PutInt(attrProcessPID, 7) })                       // 0
	add(func(a pcommon.Map) { a.PutStr(attrProcessPID, "7") })                     // 1
	add(func(a pcommon.Map) { a.PutInt(attrProcessPID, 7) })                       // 2: 0's stream
	add(func(a pcommon.Map) { a.PutDouble("log.iostream", math.NaN()) })           // 3
	add(func(a pcommon.Map) { a.PutDouble("log.iostream", math.NaN()) })           // 4: not 3's
	add(func(a pcommon.Map) { a.PutDouble("log.iostream", 0) })                    // 5
	add(func(a pcommon.Map) { a.PutDouble("log.iostream", math.Copysign(0, -1)) }) // 6: 5's
	add(func(pcommon.Map) {})                                                      // 7
	add(func(a pcommon.Map) { a.PutEmpty("log.file.name") })                       // 8: not 7's
	add(func(pcommon.Map) {})                                                      // 9: 7's
	for _, collide := range []bool{false, true} {
		if collide { // every stream's hash the same: the keys themselves tell them apart
			saved := streamHash
			streamHash = func(streamKey) uint64 { return 0 }
			t.Cleanup(func() { streamHash = saved })
		}
		sx := newStreams(lrs)
		for _, c := range []struct{ i, want int }{{0, 2}, {1, -1}, {2, -1}, {3, -1}, {4, -1}, {5, 6}, {7, 9}, {8, -1}} {
			assert.Equal(t, c.want, sx.next(c.i), "collide %v: next of record %d", collide, c.i)
		}
	}
}

// BenchmarkStitchDistinctStreams: 4,000 heads, each from its own stream, in one batch.
func BenchmarkStitchDistinctStreams(b *testing.B) {
	lrs := scopeRecords(distinctHeads(4000))
	b.ReportAllocs()
	for b.Loop() {
		if heads, _ := stitchBatch(lrs); len(heads) != lrs.Len() {
			b.Fatal("heads not recognised")
		}
	}
}

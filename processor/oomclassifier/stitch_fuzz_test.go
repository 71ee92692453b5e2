package oomclassifier

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/parse"
)

// corpusTexts reads the text of every entry of the cited corpus (OOMs and look-alikes).
func corpusTexts(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("../../testdata/oom/corpus/*.jsonl")
	if err != nil || len(files) == 0 {
		tb.Fatalf("corpus not found: %v", err)
	}
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Text != "" {
				out = append(out, e.Text)
			}
		}
		_ = fh.Close()
	}
	return out
}

// FuzzStitch splits a text into records (at its newlines and at the fuzzer's cut points),
// mixes in another file's lines, and checks the stitcher's promises: every record leaves, in
// order, with its body; a record that is not an OOM or Xid line of its own leaves exactly as
// it came; a head states at least what it stated alone.
func FuzzStitch(f *testing.F) {
	for _, s := range corpusTexts(f) {
		f.Add(s, "\x10\x40", uint8(3))
	}
	f.Add(strings.Join(splitOOM, "\n"), "", uint8(2))
	f.Add(strings.Join(splitOOM, "\n")+"\n"+strings.Join(splitOOM, "\n"), "\x05", uint8(0))

	sink := new(consumertest.LogsSink)
	lp, err := NewFactory().CreateLogs(context.Background(), nopSettings(), testConfig(0), sink)
	if err != nil {
		f.Fatal(err)
	}
	if err := lp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = lp.Shutdown(context.Background()) })

	f.Fuzz(func(t *testing.T, text, cuts string, noiseEvery uint8) {
		pieces := splitAt(text, cuts)
		if len(pieces) > 200 {
			pieces = pieces[:200]
		}
		var ls []fileLine
		for i, p := range pieces {
			ls = append(ls, fileLine{file: "a.log", line: p})
			if noiseEvery > 0 && i%int(noiseEvery) == 0 {
				ls = append(ls, fileLine{file: "b.log", line: p})
			}
		}
		ld := fileLogs(ls...)
		in := plog.NewLogs()
		ld.CopyTo(in)
		sink.Reset()
		if err := lp.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
		inRecs := in.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		outRecs := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		if inRecs.Len() != outRecs.Len() {
			t.Fatalf("%d records in, %d out", inRecs.Len(), outRecs.Len())
		}
		for i := 0; i < inRecs.Len(); i++ {
			a, b := inRecs.At(i), outRecs.At(i)
			if !a.Body().Equal(b.Body()) {
				t.Fatalf("record %d's body changed or moved", i)
			}
			alone, isOOM := parse.Parse(a.Body().Str())
			_, isXid := xid.ParseLine(a.Body().Str())
			if !isOOM && !isXid {
				if !a.Attributes().Equal(b.Attributes()) {
					t.Fatalf("record %d (%q), no OOM or Xid of its own, was changed: %v", i, a.Body().Str(), b.Attributes().AsRaw())
				}
				continue
			}
			if !isOOM {
				continue
			}
			attrs := b.Attributes()
			for k, v := range map[string]int64{
				attrRequestedBytes: alone.RequestedBytes, attrTotalBytes: alone.TotalBytes, attrFreeBytes: alone.FreeBytes,
				attrAllocatedBytes: alone.AllocatedBytes, attrReservedBytes: alone.ReservedBytes, attrProcessBytes: alone.ProcessBytes,
			} {
				if _, ok := attrs.Get(k); v >= 0 && !ok {
					t.Fatalf("head %d lost %s it stated alone", i, k)
				}
			}
		}
	})
}

// splitAt splits text at its newlines and at the byte offsets cuts names (each byte an offset
// step), dropping nothing: the pieces joined are the text without its newlines.
func splitAt(text, cuts string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, c := range []byte(cuts) {
			n := int(c)
			if n == 0 || n >= len(line) {
				break
			}
			out = append(out, line[:n])
			line = line[n:]
		}
		out = append(out, line)
	}
	return out
}

package oomclassifier

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/parse"
)

// FuzzConsumeLogs feeds arbitrary text through every place a message can live. The processor
// must not panic, and a record whose texts are neither an OOM nor an Xid must leave unchanged.
func FuzzConsumeLogs(f *testing.F) {
	seeds, err := os.ReadFile("testdata/fuzz_seeds.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range strings.Split(string(seeds), "\n---\n") {
		f.Add(s, "torch.OutOfMemoryError")
	}
	f.Add("", "")
	f.Add("\xff\xfeNVRM: Xid (PCI:", "\x00")

	sink := new(consumertest.LogsSink)
	lp, err := NewFactory().CreateLogs(context.Background(), nopSettings(), testConfig(0), sink)
	if err != nil {
		f.Fatal(err)
	}
	if err := lp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = lp.Shutdown(context.Background()) })

	f.Fuzz(func(t *testing.T, msg, typ string) {
		ld := logsWith("n", t0,
			text(msg),
			func(r plog.LogRecord) { r.Body().SetEmptyMap().PutStr("msg", msg) },
			func(r plog.LogRecord) {
				r.Attributes().PutStr(attrExceptionMsg, msg)
				r.Attributes().PutStr(attrExceptionType, typ)
			},
		)
		before := marshalLogs(t, ld)
		sink.Reset()
		if err := lp.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
		_, isOOM := parse.Parse(msg)
		_, isOOMWithType := parse.Parse(typ + ": " + msg)
		_, isXid := xid.ParseLine(msg)
		if !isOOM && !isOOMWithType && !isXid && !bytes.Equal(before, marshalLogs(t, sink.AllLogs()[0])) {
			t.Fatalf("unrecognised text changed the records: %q", msg)
		}
	})
}

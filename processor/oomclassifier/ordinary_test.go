package oomclassifier

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// ordinaryRecord vouches only for records the full path would pass over.
func TestOrdinaryRecord(t *testing.T) {
	rec := func(set func(plog.LogRecord)) plog.LogRecord {
		r := plog.NewLogRecord()
		set(r)
		return r
	}
	for _, tt := range []struct {
		name string
		rec  plog.LogRecord
		want bool
	}{
		{"ordinary line", rec(func(r plog.LogRecord) {
			r.Body().SetStr("INFO step=1 loss=0.2")
			r.Attributes().PutStr("log.iostream", "stdout")
		}), true},
		{"OOM body", rec(func(r plog.LogRecord) { r.Body().SetStr(pytorchOOM) }), false},
		{"Xid body", rec(func(r plog.LogRecord) { r.Body().SetStr("kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1") }), false},
		{"map body", rec(func(r plog.LogRecord) { r.Body().SetEmptyMap().PutStr("message", "INFO") }), false},
		{"event name", rec(func(r plog.LogRecord) { r.Body().SetStr("INFO"); r.SetEventName(eventXid) }), false},
		{"event.name attribute", rec(func(r plog.LogRecord) { r.Body().SetStr("INFO"); r.Attributes().PutStr(attrEventName, eventXid) }), false},
		{"exception attribute", rec(func(r plog.LogRecord) {
			r.Body().SetStr("INFO")
			r.Attributes().PutStr(attrExceptionMsg, "CUDA out of memory")
		}), false},
		{"exception.type attribute", rec(func(r plog.LogRecord) {
			r.Body().SetStr("INFO")
			r.Attributes().PutStr("log.iostream", "stderr")
			r.Attributes().PutStr(attrExceptionType, "torch.OutOfMemoryError")
		}), false},
		{"exception.stacktrace attribute", rec(func(r plog.LogRecord) {
			r.Body().SetStr("INFO")
			r.Attributes().PutStr(attrExceptionST, "Traceback (most recent call last):")
		}), false},
		// eachText reads only exception.message, .type and .stacktrace: another exception
		// attribute leaves the full path with the body alone, which the prefilters decide.
		{"other exception attribute", rec(func(r plog.LogRecord) {
			r.Body().SetStr("INFO step=1 loss=0.2")
			r.Attributes().PutBool("exception.escaped", true)
		}), true},
	} {
		if got := ordinaryRecord(tt.rec); got != tt.want {
			t.Errorf("%s: ordinaryRecord = %v; want %v", tt.name, got, tt.want)
		}
	}
}

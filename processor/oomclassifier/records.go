package oomclassifier

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/parse"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file recognises OOM and Xid records: where their text lives and what it says.

// recordTime is the record's own time, else when it was observed, else now: the window is
// indexed by data time, and now is only the last resort of a record that carries neither.
func recordTime(rec plog.LogRecord) time.Time {
	if ts := rec.Timestamp(); ts != 0 {
		return ts.AsTime()
	}
	if ts := rec.ObservedTimestamp(); ts != 0 {
		return ts.AsTime()
	}
	return time.Now()
}

// messageKeys are the map-body keys that hold the text in structured logs (JSON loggers,
// journald's MESSAGE, container runtimes' log).
var messageKeys = [...]string{"message", "msg", "log", "error", "MESSAGE"}

// eachText calls fn with each text of the record where a message can live, best first, until
// fn returns true. withException adds the OTel exception attributes.
func eachText(rec plog.LogRecord, withException bool, fn func(string) bool) {
	if withException {
		attrs := rec.Attributes()
		msg, typ := str(attrs, attrExceptionMsg), str(attrs, attrExceptionType)
		switch {
		case msg != "" && typ != "":
			if fn(typ + ": " + msg) { // the traceback's last line: some templates need the type
				return
			}
		case msg != "":
			if fn(msg) {
				return
			}
		}
		if st := str(attrs, attrExceptionST); st != "" && fn(st) {
			return
		}
	}
	body := rec.Body()
	switch body.Type() {
	case pcommon.ValueTypeStr:
		fn(body.Str())
	case pcommon.ValueTypeMap:
		m := body.Map()
		for _, k := range messageKeys {
			if s := str(m, k); s != "" && fn(s) {
				return
			}
		}
	}
}

// oomRecord is a recognised OOM waiting for classification.
type oomRecord struct {
	rec  plog.LogRecord
	msg  parse.Result
	host string
	at   time.Time
	pid  int
	// pod is the record's Kubernetes identity (record attributes, else the resource's).
	pod window.PodRef
	// timeNote says why at is not the record's own timestamp; added to the evidence.
	timeNote string
	// text is the record's text the OOM was recognised in, for stitch.
	text string
	// stitchNote says the numbers came from more than this record; added to the evidence.
	stitchNote string
}

// findOOM parses the record's texts.
func findOOM(rec plog.LogRecord, res pcommon.Map) (oomRecord, bool) {
	var o oomRecord
	ok := findOOMInto(rec, res, &o)
	return o, ok
}

// findOOMInto is findOOM filling o, so that the scan of a batch builds no record per line.
func findOOMInto(rec plog.LogRecord, res pcommon.Map, o *oomRecord) bool {
	found := false
	host := "" // read only for a text that passed the prefilter
	eachText(rec, true, func(text string) bool {
		if !parse.MayBeOOM(text) {
			return false
		}
		if host == "" {
			host = str(res, resHostName)
		}
		// The record's own host.name is no device context (a node named gpu001).
		o.msg, found = parse.ParseOnHost(text, host)
		o.text = text
		return found
	})
	if !found {
		return false
	}
	o.rec, o.host, o.at, o.pid = rec, str(res, resHostName), recordTime(rec), o.msg.PID
	if o.pid < 0 {
		o.pid = integer(rec.Attributes(), attrProcessPID)
	}
	if o.pid < 0 {
		o.pid = integer(res, attrProcessPID)
	}
	readPodRef(rec.Attributes(), &o.pod)
	readPodRef(res, &o.pod)
	return true
}

// readPodRef fills the fields of r still empty from attrs, in one pass: file_log's container
// parser puts the pod on the resource, an SDK's k8s attributes may sit on the record.
func readPodRef(attrs pcommon.Map, r *window.PodRef) {
	for k, v := range attrs.All() {
		var dst *string
		switch k {
		case attrPodUID:
			dst = &r.UID
		case attrContainerID:
			dst = &r.ContainerID
		case attrNamespace:
			dst = &r.Namespace
		case attrPodName:
			dst = &r.Name
		case attrContainerName:
			dst = &r.Container
		default:
			continue
		}
		if *dst == "" {
			*dst = strValue(v)
		}
	}
}

// eventName is a record's event name: the field, else the event.name attribute older
// senders set.
func eventName(rec plog.LogRecord) string {
	if n := rec.EventName(); n != "" {
		return n
	}
	return str(rec.Attributes(), attrEventName)
}

// receiverXid reads an Xid record of the gpu_mem receiver (already annotated) as evidence.
func receiverXid(rec plog.LogRecord, res pcommon.Map) (window.Xid, bool) {
	if eventName(rec) != eventXid {
		return window.Xid{}, false
	}
	v, ok := rec.Attributes().Get(attrXid)
	if !ok || v.Type() != pcommon.ValueTypeInt {
		return window.Xid{}, false
	}
	e := xid.Lookup(int(v.Int()))
	busID := str(rec.Attributes(), attrPCIBusID)
	if busID == "" {
		busID = str(res, attrPCIBusID)
	}
	return window.Xid{T: recordTime(rec), Code: e.Code, Fault: e.Fault, Description: e.Description,
		HWID: str(res, attrHWID), BusID: xid.NormalizeBusID(busID)}, true
}

// ordinaryRecord reports the common record that is neither an Xid nor an OOM, decided on one
// read of it: a string body that neither prefilter passes (parse.MayBeOOMOrXid), no event name, none of the
// exception attributes eachText reads. scan skips such a record without the per-kind readers
// (eventName, kernelXid, findOOMInto), each of which looks the attributes up and reads the
// body again: on 60-byte lines those lookups cost as much as the prefilter itself. Any record it does not vouch for takes the full path, so the result is the same
// either way.
func ordinaryRecord(rec plog.LogRecord) bool {
	if rec.EventName() != "" {
		return false
	}
	body := rec.Body()
	if body.Type() != pcommon.ValueTypeStr {
		return false
	}
	plain := true
	rec.Attributes().Range(func(k string, _ pcommon.Value) bool {
		// The exact keys the full path reads, not a prefix: a switch on constants compares a
		// key's length first, so the usual keys (log.iostream, log.file.path, ...) are told
		// apart without reading their bytes, each a separate allocation of the receiver's and
		// a cache miss in a running collector (scripts/e2e-cpu.sh's profile).
		switch k {
		case attrEventName, attrExceptionMsg, attrExceptionType, attrExceptionST:
			plain = false
		}
		return plain
	})
	if !plain {
		return false
	}
	// Both prefilters in one pass over the text: a second pass (the Xid tag's) cost a
	// fifth of the prefilter again on 60-byte lines.
	return !parse.MayBeOOMOrXid(body.Str())
}

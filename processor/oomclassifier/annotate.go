package oomclassifier

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file annotates kernel Xid lines found in plain log records.

// kernelXid recognises a kernel Xid line in a plain record, annotates the record and returns
// the event as evidence.
func kernelXid(rec plog.LogRecord, res pcommon.Map) (window.Xid, bool) {
	var ev xid.Event
	found := false
	eachText(rec, false, func(text string) bool {
		if !xid.MayBeLine(text) {
			return false
		}
		ev, found = xid.ParseLine(text)
		return found
	})
	if !found {
		return window.Xid{}, false
	}
	e := xid.Lookup(ev.Code)
	attrs := rec.Attributes()
	putInt(attrs, attrXid, int64(ev.Code))
	putStr(attrs, attrXidDescription, e.Description)
	putStr(attrs, attrXidOrigin, e.Origin)
	putStr(attrs, attrXidMnemonic, e.Mnemonic) // putStr skips the empty ones of codes without them
	putStr(attrs, attrXidAction, e.Action)
	putStr(attrs, attrPCIBusID, ev.BusID)
	if ev.HasPID {
		putInt(attrs, attrProcessPID, int64(ev.PID))
	}
	putStr(attrs, attrProcessName, ev.ProcessName)
	at := ev.Timestamp
	if rec.Timestamp() != 0 || at.IsZero() {
		at = recordTime(rec)
	}
	return window.Xid{T: at, Code: ev.Code, Fault: e.Fault, Description: e.Description,
		HWID: str(res, attrHWID), BusID: xid.NormalizeBusID(ev.BusID)}, true
}

package gpumemreceiver

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// xidLogs turns Xid occurrences into log records, one resource per GPU (docs/metrics.md).
func xidLogs(events []xidEvent, driver string, switches *metadata.ResourceSwitches, version string, observed pcommon.Timestamp) plog.Logs {
	ld := plog.NewLogs()
	scopes := map[string]plog.LogRecordSlice{}
	for i := range events {
		e := &events[i]
		key := e.busID
		if e.dev != nil {
			key = e.dev.UUID
		}
		records, ok := scopes[key]
		if !ok {
			rl := ld.ResourceLogs().AppendEmpty()
			res := switches.Wrap(rl.Resource().Attributes())
			if e.dev != nil {
				describe(res, e.dev, driver)
			} else {
				// A GPU NVML no longer sees (Xid 79) keeps what the kernel line says.
				res.SetStr(metadata.ResHwType, metadata.AttrHwTypeGpu)
				res.SetStr(metadata.ResHwVendor, metadata.ResHwVendorNvidia)
				res.SetStr(metadata.ResNvidiaGpuPciBusID, e.busID)
			}
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(metadata.ScopeName)
			sl.Scope().SetVersion(version)
			records = sl.LogRecords()
			scopes[key] = records
		}
		fillXidRecord(records.AppendEmpty(), e, observed)
	}
	return ld
}

func fillXidRecord(lr plog.LogRecord, e *xidEvent, observed pcommon.Timestamp) {
	entry := xid.Lookup(e.code)
	lr.SetTimestamp(pcommon.NewTimestampFromTime(e.time))
	lr.SetObservedTimestamp(observed)
	if entry.Severity == xid.SeverityError {
		lr.SetSeverityNumber(plog.SeverityNumberError)
	} else {
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
	}
	lr.SetSeverityText(string(entry.Severity))
	body := e.text
	if body == "" {
		body = fmt.Sprintf("Xid %d on GPU %s: %s", e.code, e.busID, entry.Description)
	}
	lr.Body().SetStr(body)
	lr.SetEventName(metadata.LogEventNameXid)
	attrs := lr.Attributes()
	attrs.PutStr(metadata.LogAttrEventName, metadata.LogEventNameXid)
	attrs.PutInt(metadata.LogAttrXid, int64(e.code))
	attrs.PutStr(metadata.LogAttrXidDescription, entry.Description)
	attrs.PutStr(metadata.LogAttrXidOrigin, entry.Origin)
	// NVIDIA's mnemonic and immediate action; absent where the catalog has none.
	if entry.Mnemonic != "" {
		attrs.PutStr(metadata.LogAttrXidMnemonic, entry.Mnemonic)
	}
	if entry.Action != xid.ActionNone {
		attrs.PutStr(metadata.LogAttrXidAction, entry.Action)
	}
	if e.busID != "" {
		attrs.PutStr(metadata.LogAttrPciBusID, e.busID)
	}
	if e.hasPID {
		attrs.PutInt(metadata.LogAttrProcessPID, int64(e.pid))
	}
	if e.name != "" {
		attrs.PutStr(metadata.LogAttrProcessExecutableName, e.name)
	}
	attrs.PutStr(metadata.LogAttrXidSource, e.source())
}

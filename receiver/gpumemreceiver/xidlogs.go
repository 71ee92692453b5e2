package gpumemreceiver

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// xidLogs turns Xid occurrences into log records, one resource per GPU (docs/metrics.md).
func xidLogs(events []xidsource.Event, driver string, switches *metadata.ResourceSwitches, version string, observed pcommon.Timestamp) plog.Logs {
	ld := plog.NewLogs()
	scopes := map[string]plog.LogRecordSlice{}
	for i := range events {
		e := &events[i]
		key := e.BusID
		if e.Dev != nil {
			key = e.Dev.UUID
		}
		records, ok := scopes[key]
		if !ok {
			rl := ld.ResourceLogs().AppendEmpty()
			res := switches.Wrap(rl.Resource().Attributes())
			if e.Dev != nil {
				describe(res, e.Dev, driver)
			} else {
				// A GPU NVML no longer sees (Xid 79) keeps what the kernel line says.
				res.SetStr(metadata.ResHwType, metadata.AttrHwTypeGpu)
				res.SetStr(metadata.ResHwVendor, metadata.ResHwVendorNvidia)
				res.SetStr(metadata.ResNvidiaGpuPciBusID, e.BusID)
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

func fillXidRecord(lr plog.LogRecord, e *xidsource.Event, observed pcommon.Timestamp) {
	entry := xid.Lookup(e.Code)
	lr.SetTimestamp(pcommon.NewTimestampFromTime(e.Time))
	lr.SetObservedTimestamp(observed)
	if entry.Severity == xid.SeverityError {
		lr.SetSeverityNumber(plog.SeverityNumberError)
	} else {
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
	}
	lr.SetSeverityText(string(entry.Severity))
	body := e.Text
	if body == "" {
		body = fmt.Sprintf("Xid %d on GPU %s: %s", e.Code, e.BusID, entry.Description)
	}
	lr.Body().SetStr(body)
	lr.SetEventName(metadata.LogEventNameXid)
	attrs := lr.Attributes()
	attrs.PutStr(metadata.LogAttrEventName, metadata.LogEventNameXid)
	attrs.PutInt(metadata.LogAttrXid, int64(e.Code))
	attrs.PutStr(metadata.LogAttrXidDescription, entry.Description)
	attrs.PutStr(metadata.LogAttrXidOrigin, entry.Origin)
	// NVIDIA's mnemonic and immediate action; absent where the catalog has none.
	if entry.Mnemonic != "" {
		attrs.PutStr(metadata.LogAttrXidMnemonic, entry.Mnemonic)
	}
	if entry.Action != xid.ActionNone {
		attrs.PutStr(metadata.LogAttrXidAction, entry.Action)
	}
	if e.BusID != "" {
		attrs.PutStr(metadata.LogAttrPciBusID, e.BusID)
	}
	if e.HasPID {
		attrs.PutInt(metadata.LogAttrProcessPID, int64(e.PID))
	}
	if e.Name != "" {
		attrs.PutStr(metadata.LogAttrProcessExecutableName, e.Name)
	}
	attrs.PutStr(metadata.LogAttrXidSource, e.Source())
}

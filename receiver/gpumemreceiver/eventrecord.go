package gpumemreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// appendEventRecord adds to *pending (made on first use) one WARN record of the named event
// in a resource of its own, and returns the resource's attributes (for the device's
// description) and the record. The scraper's event records (predicted OOMs, unexpected
// consumers) share this shape: one per episode, on the device they are about.
func appendEventRecord(pending *plog.Logs, version, event string, ts pcommon.Timestamp) (pcommon.Map, plog.LogRecord) {
	if *pending == (plog.Logs{}) {
		*pending = plog.NewLogs()
	}
	rl := pending.ResourceLogs().AppendEmpty()
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	sl.Scope().SetVersion(version)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(ts)
	lr.SetObservedTimestamp(ts)
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	lr.SetEventName(event)
	lr.Attributes().PutStr(metadata.LogAttrEventName, event)
	return rl.Resource().Attributes(), lr
}

package gpumemreceiver

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/ramp"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// warn queues the predicted-OOM record of a new episode on d (documentation.md, "Memory
// runway"): the device's resource, the fastest-growing process's attributes as on its
// memory metric, the rates and the runway, and a body for the person on call.
func (t *runwayTracker) warn(d *nvmlx.Device, driver string, ts pcommon.Timestamp, fit ramp.Fit, runway float64, mem memoryReading, top *processGrowth) {
	res, lr := appendEventRecord(&t.pending, t.version, metadata.LogEventNameOOMPredicted, ts)
	describe(t.switches.Wrap(res), d, driver)
	attrs := lr.Attributes()
	attrs.PutDouble(metadata.LogAttrRunway, runway)
	attrs.PutDouble(metadata.LogAttrGrowth, fit.Slope)
	if top != nil {
		top.dp.Attributes().Range(func(k string, v pcommon.Value) bool {
			v.CopyTo(attrs.PutEmpty(k))
			return true
		})
		attrs.PutDouble(metadata.LogAttrProcessGrowth, top.slope)
	}
	lr.Body().SetStr(runwayBody(d, fit, runway, mem, top))
}

// runwayBody is the record's text: what will happen, when, why we think so, and who.
func runwayBody(d *nvmlx.Device, fit ramp.Fit, runway float64, mem memoryReading, top *processGrowth) string {
	var b strings.Builder
	fmt.Fprintf(&b, "GPU memory will be full in about %s: %s is growing steadily at %s/s (for %s; %s free of %s).",
		humanSeconds(runway), deviceLabel(d), humanBytes(fit.Slope), humanSeconds(fit.Dur.Seconds()),
		humanBytes(float64(max(mem.free, 0))), humanBytes(float64(mem.total)))
	if top == nil {
		b.WriteString(" No listed process grows steadily on its own: check memory no process accounts for (nvidia.gpu.memory.unattributed) and processes outside this collector's view.")
	} else {
		a := top.dp.Attributes()
		fmt.Fprintf(&b, " Growing fastest: pid %d", intAttr(a, metadata.AttrProcessPID))
		var who []string
		if v := strAttr(a, metadata.AttrProcessExecutableName); v != "" {
			who = append(who, v)
		}
		if v := strAttr(a, metadata.AttrContainerID); v != "" {
			who = append(who, "container "+v[:min(len(v), 12)])
		}
		if v := strAttr(a, metadata.AttrK8sPodUID); v != "" {
			who = append(who, "pod "+v)
		}
		if len(who) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(who, ", "))
		}
		fmt.Fprintf(&b, " at %s/s.", humanBytes(top.slope))
	}
	b.WriteString(" At this rate the next allocation on this GPU fails when it fills; if the growth is not expected (tensors kept across steps, a cache without a bound), act on that process now.")
	return b.String()
}

// deviceLabel names a GPU or MIG instance the way an operator finds it.
func deviceLabel(d *nvmlx.Device) string {
	if d.Parent != nil {
		return fmt.Sprintf("MIG instance %s of GPU %d (%s)", d.Profile, d.Index, d.UUID)
	}
	return fmt.Sprintf("GPU %d (%s, %s)", d.Index, d.Name, d.UUID)
}

func intAttr(m pcommon.Map, k string) int64 {
	if v, ok := m.Get(k); ok {
		return v.Int()
	}
	return -1
}

func strAttr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.Str()
	}
	return ""
}

// humanBytes writes bytes in binary units with one decimal: "1.4 GiB", "30.0 MiB".
func humanBytes(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", v)
	}
}

// humanSeconds writes a duration in seconds below two minutes, minutes below two hours,
// hours above.
func humanSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d < 2*time.Hour:
		return fmt.Sprintf("%.0f min", d.Minutes())
	default:
		return fmt.Sprintf("%.1f h", d.Hours())
	}
}

// logText is one record's event name and text.
type logText struct{ event, body string }

// logTexts lists the records' event names and texts.
func logTexts(ld plog.Logs) []logText {
	var out []logText
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				out = append(out, logText{lrs.At(k).EventName(), lrs.At(k).Body().Str()})
			}
		}
	}
	return out
}

package oomclassifier

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/parse"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file alone converts between pdata and the plain Go types of the internal packages.

// metricKind names the window's stream of a metric. A switch rather than a map: the compiler
// dispatches on length and then compares only the candidates, with no hashing.
func metricKind(name string) (window.Kind, bool) {
	switch name {
	case metricUsage:
		return window.Used, true
	case metricLimit:
		return window.Total, true
	case metricFree:
		return window.Free, true
	case metricReserved:
		return window.Reserved, true
	case metricUnattributed:
		return window.Unattributed, true
	case metricProcess:
		return window.ProcessBytes, true
	case metricRetired:
		return window.RetiredPages, true
	case metricRetiredPend:
		return window.RetiredPagesPending, true
	case metricRemapped:
		return window.RemappedRows, true
	case metricRemapPending:
		return window.RemapPending, true
	case metricRemapFailed:
		return window.RemapFailed, true
	}
	return 0, false
}

// observeMetrics records the window's metrics of every GPU resource in md; buf is reused
// between calls to keep observation allocation-free.
func observeMetrics(md pmetric.Metrics, store *window.Store, buf []window.Sample) ([]window.Sample, window.Overflow) {
	var total window.Overflow
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		key, info := gpuResource(rms.At(i).Resource().Attributes())
		if key.HWID == "" {
			continue // not a GPU resource
		}
		buf = buf[:0]
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				buf = appendSamples(buf, ms.At(k))
			}
		}
		if len(buf) == 0 {
			continue
		}
		info.BusID = xid.NormalizeBusID(info.BusID)
		of := store.Observe(key, info, buf)
		total.GPUsEvicted += of.GPUsEvicted
		total.SamplesCapped += of.SamplesCapped
		total.ProcessesEvicted += of.ProcessesEvicted
		total.LabelsRejected += of.LabelsRejected
	}
	return buf, total
}

// gpuResource reads what the window needs of a resource in one pass over its attributes
// (one Get per key would scan them five times). The bus id is returned as written.
func gpuResource(res pcommon.Map) (window.GPUKey, window.GPUInfo) {
	var key window.GPUKey
	info := window.GPUInfo{Index: -1}
	for k, v := range res.All() {
		switch k {
		case attrHWID:
			key.HWID = strValue(v)
		case resHostName:
			key.Host = strValue(v)
		case resHWName:
			info.Name = strValue(v)
		case attrPCIBusID:
			info.BusID = strValue(v)
		case resGPUIndex:
			info.Index = intValue(v)
		}
	}
	return key, info
}

func appendSamples(buf []window.Sample, m pmetric.Metric) []window.Sample {
	kind, ok := metricKind(m.Name())
	if !ok {
		return buf
	}
	var dps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	default:
		return buf
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		if dp.Timestamp() == 0 || dp.Flags().NoRecordedValue() {
			continue // without its own time a point cannot be placed in the window
		}
		// Filled in place: a Sample is over 100 bytes, and building one to copy it in cost
		// more than reading the point.
		buf = append(buf, window.Sample{Kind: kind, T: int64(dp.Timestamp()), V: pointValue(dp)})
		s := &buf[len(buf)-1]
		attrs := dp.Attributes()
		switch kind {
		case window.ProcessBytes:
			if readProcess(attrs, &s.Process); s.Process.PID < 0 {
				buf = buf[:len(buf)-1] // without its pid a point belongs to no process
			}
		case window.RetiredPages:
			s.Label = str(attrs, attrRetireCause)
		case window.RemappedRows:
			s.Label = str(attrs, attrRemapType)
		}
	}
	return buf
}

// readProcess reads the process attributes into p in one pass over the point's attributes:
// the per-process points are most of a collection, and one Get per key scans the map each
// time. p.PID is -1 when the point has no valid pid.
func readProcess(attrs pcommon.Map, p *window.ProcessInfo) {
	p.PID = -1
	for k, v := range attrs.All() {
		switch k {
		case attrProcessPID:
			p.PID = intValue(v)
		case attrProcessName:
			p.Name = strValue(v)
		case attrContainerID:
			p.ContainerID = strValue(v)
		case attrPodUID:
			p.PodUID = strValue(v)
		case attrProcessType:
			p.Type = strValue(v)
		}
	}
}

func pointValue(dp pmetric.NumberDataPoint) int64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
		f := dp.DoubleValue()
		if math.IsNaN(f) || f > math.MaxInt64 || f < math.MinInt64 {
			return 0
		}
		return int64(math.Round(f))
	}
	return dp.IntValue()
}

// str returns a string attribute, or "" when absent or not a string.
func str(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return strValue(v)
	}
	return ""
}

// integer returns an int attribute (or a string holding one), or -1 when absent or invalid.
func integer(m pcommon.Map, key string) int {
	if v, ok := m.Get(key); ok {
		return intValue(v)
	}
	return -1
}

func strValue(v pcommon.Value) string {
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

func intValue(v pcommon.Value) int {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		if n := v.Int(); n >= 0 && n <= math.MaxInt32 {
			return int(n)
		}
	case pcommon.ValueTypeStr:
		if n, err := strconv.Atoi(v.Str()); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

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
}

// findOOM parses the record's texts.
func findOOM(rec plog.LogRecord, res pcommon.Map) (oomRecord, bool) {
	var o oomRecord
	found := false
	eachText(rec, true, func(text string) bool {
		o.msg, found = parse.Parse(text)
		return found
	})
	if !found {
		return o, false
	}
	o.rec, o.host, o.at, o.pid = rec, str(res, resHostName), recordTime(rec), o.msg.PID
	if o.pid < 0 {
		o.pid = integer(rec.Attributes(), attrProcessPID)
	}
	if o.pid < 0 {
		o.pid = integer(res, attrProcessPID)
	}
	return o, true
}

// receiverXid reads an Xid record of the gpu_mem receiver (already annotated) as evidence.
func receiverXid(rec plog.LogRecord, res pcommon.Map) (window.Xid, bool) {
	if rec.EventName() != eventXid && str(rec.Attributes(), attrEventName) != eventXid {
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

// kernelXid recognises a kernel Xid line in a plain record, annotates the record and returns
// the event as evidence.
func kernelXid(rec plog.LogRecord, res pcommon.Map) (window.Xid, bool) {
	var ev xid.Event
	found := false
	eachText(rec, false, func(text string) bool {
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

// classifyOOM classifies one OOM against the window and writes the attributes.
func classifyOOM(o oomRecord, store *window.Store, th classify.Thresholds) classify.Result {
	m := o.msg
	oom := classify.OOM{
		Framework: m.Framework, RequestedBytes: m.RequestedBytes, TotalBytes: m.TotalBytes,
		FreeBytes: m.FreeBytes, AllocatedBytes: m.AllocatedBytes, ReservedBytes: m.ReservedBytes,
		ProcessBytes: m.ProcessBytes, DeviceIndex: m.DeviceIndex, PID: o.pid, Time: o.at,
	}
	buf := classifyBufs.Get().(*classifyBuf)
	defer classifyBufs.Put(buf)
	var gpu *classify.GPUState
	if store.SnapshotTo(&buf.snap, window.Query{Host: o.host, At: o.at, PID: o.pid, DeviceIndex: m.DeviceIndex}) {
		gpu = buf.gpuState()
	}
	res := classify.Classify(oom, gpu, th)

	attrs := o.rec.Attributes()
	putStr(attrs, attrFramework, m.Framework)
	for _, b := range [...]struct {
		key string
		v   int64
	}{
		{attrRequestedBytes, m.RequestedBytes}, {attrTotalBytes, m.TotalBytes}, {attrFreeBytes, m.FreeBytes},
		{attrAllocatedBytes, m.AllocatedBytes}, {attrReservedBytes, m.ReservedBytes},
		{attrProcessBytes, m.ProcessBytes}, {attrDeviceIndex, int64(m.DeviceIndex)},
	} {
		if b.v >= 0 {
			putInt(attrs, b.key, b.v)
		}
	}
	if _, set := attrs.Get(attrOtherProcesses); !set && len(m.OtherProcesses) > 0 {
		s := attrs.PutEmptySlice(attrOtherProcesses)
		for _, p := range m.OtherProcesses {
			e := s.AppendEmpty().SetEmptyMap()
			e.PutInt(attrProcessPID, int64(p.PID))
			e.PutInt(keyBytes, p.Bytes)
		}
	}
	putStr(attrs, attrCause, res.Cause)
	if _, set := attrs.Get(attrContributing); !set && len(res.Contributing) > 0 {
		s := attrs.PutEmptySlice(attrContributing)
		for _, c := range res.Contributing {
			s.AppendEmpty().SetStr(c)
		}
	}
	putStr(attrs, attrConfidence, res.Confidence)
	putStr(attrs, attrEvidence, res.Evidence)
	putStr(attrs, attrRecommendation, res.Recommendation)
	if gpu != nil {
		putStr(attrs, attrHWID, gpu.HWID)
	}
	return res
}

// classifyBuf holds what one classification copies out of the window and converts for the
// classifier. A full window is two 900-point series per OOM; pooling the arrays leaves the
// classification allocating only its sentences. Nothing of it outlives classifyOOM: the
// Result holds only strings, which are immutable and safe to keep.
type classifyBuf struct {
	snap          window.Snapshot
	gpu           classify.GPUState
	usage, series []classify.Point
	procs         []classify.Process
	xids          []classify.XidEvent
}

var classifyBufs = sync.Pool{New: func() any { return new(classifyBuf) }}

// gpuState converts b.snap into b.gpu.
func (b *classifyBuf) gpuState() *classify.GPUState {
	s := &b.snap
	b.usage = classifyPoints(b.usage, s.Usage)
	b.procs = b.procs[:0]
	reused := false
	for _, p := range s.Processes {
		cp := classify.Process{
			PID: p.PID, Name: p.Name, ContainerID: p.ContainerID, PodUID: p.PodUID, Type: p.Type, Bytes: p.Bytes,
		}
		switch {
		case len(p.Series) == 0:
		case !reused: // the failing process: the window copies no other series
			b.series, reused = classifyPoints(b.series, p.Series), true
			cp.Series = b.series
		default: // should the window ever copy more, they must not share one array
			cp.Series = classifyPoints(nil, p.Series)
		}
		b.procs = append(b.procs, cp)
	}
	b.xids = b.xids[:0]
	for _, x := range s.Xids {
		b.xids = append(b.xids, classify.XidEvent{T: x.T, Code: x.Code, Fault: x.Fault, Description: x.Description})
	}
	b.gpu = classify.GPUState{
		HWID: s.HWID, Name: s.Info.Name, MatchedBy: s.MatchedBy,
		Total: s.Total, Used: s.Used, Free: s.Free, Reserved: s.Reserved, Unattributed: s.Unattributed,
		SampleAge: s.SampleAge, Usage: nilIfEmpty(b.usage), Processes: nilIfEmpty(b.procs), Xids: nilIfEmpty(b.xids),
		RetiredPages: s.RetiredPages, RetiredPagesPending: s.RetiredPagesPending,
		RemappedRows: s.RemappedRows, RemapFailed: s.RemapFailed, RemapPending: s.RemapPending,
	}
	return &b.gpu
}

// classifyPoints converts window points (integer bytes) into dst, reusing its array.
func classifyPoints(dst []classify.Point, ps []window.Point) []classify.Point {
	dst = slices.Grow(dst[:0], len(ps))[:len(ps)]
	for i, p := range ps {
		dst[i] = classify.Point{T: p.T, V: float64(p.V)}
	}
	return dst
}

// nilIfEmpty keeps the classifier's reading of an empty input: nil, "none known".
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// putStr and putInt add an attribute unless it is already set or the value is empty: the
// processor enriches, it never overwrites.
func putStr(m pcommon.Map, k, v string) {
	if _, set := m.Get(k); !set && v != "" {
		m.PutStr(k, v)
	}
}

func putInt(m pcommon.Map, k string, v int64) {
	if _, set := m.Get(k); !set {
		m.PutInt(k, v)
	}
}

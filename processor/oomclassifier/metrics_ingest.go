package oomclassifier

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file turns metric batches into the window's samples.

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
	case metricHidden:
		return window.ProcessesHidden, true
	}
	return 0, false
}

// observeBuf holds the arrays one observation fills, reused between calls to keep
// observation allocation-free.
type observeBuf struct {
	samples []window.Sample
	allocs  []window.AllocationPoint
}

// observeMetrics records the window's metrics of every GPU resource in md.
func observeMetrics(md pmetric.Metrics, store *window.Store, b *observeBuf) window.Overflow {
	var total window.Overflow
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		key, info := gpuResource(rms.At(i).Resource().Attributes())
		if key.HWID == "" {
			continue // not a GPU resource
		}
		b.samples, b.allocs = b.samples[:0], b.allocs[:0]
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if m := ms.At(k); m.Name() == metricAllocation {
					b.allocs = appendAllocations(b.allocs, m)
				} else {
					b.samples = appendSamples(b.samples, m, &total)
				}
			}
		}
		info.BusID = xid.NormalizeBusID(info.BusID)
		if len(b.samples) > 0 {
			total.Add(store.Observe(key, info, b.samples))
		}
		if len(b.allocs) > 0 { // after Observe: the window the points must fall in is the GPU's newest
			total.Add(store.ObserveAllocations(key, info, b.allocs))
		}
	}
	return total
}

// gpuResource reads what the window needs of a resource in one pass over its attributes
// (one Get per key would scan them six times). The bus id is returned as written. The
// product name (what spec_totals is keyed by) is hw.model; agents older than hw.model put it
// in hw.name, which is read only when hw.model is absent.
func gpuResource(res pcommon.Map) (window.GPUKey, window.GPUInfo) {
	var key window.GPUKey
	info := window.GPUInfo{Index: -1}
	var model, name string
	for k, v := range res.All() {
		switch k {
		case attrHWID:
			key.HWID = strValue(v)
		case resHostName:
			key.Host = strValue(v)
		case resHWModel:
			model = strValue(v)
		case resHWName:
			name = strValue(v)
		case attrPCIBusID:
			info.BusID = strValue(v)
		case resGPUIndex:
			info.Index = intValue(v)
		}
	}
	if info.Name = model; model == "" {
		info.Name = name
	}
	return key, info
}

// appendSamples adds the metric's points to buf; values that are no number (NaN, Inf, beyond
// int64) are counted in of and left out.
func appendSamples(buf []window.Sample, m pmetric.Metric, of *window.Overflow) []window.Sample {
	kind, ok := metricKind(m.Name())
	if !ok {
		return buf
	}
	dps, ok := numberPoints(m)
	if !ok {
		return buf
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		if dp.Timestamp() == 0 || dp.Flags().NoRecordedValue() {
			continue // without its own time a point cannot be placed in the window
		}
		// Filled in place: a Sample is over 100 bytes, and building one to copy it in cost
		// more than reading the point.
		v, ok := pointValue(dp)
		if !ok {
			of.ValuesRejected++
			continue
		}
		buf = append(buf, window.Sample{Kind: kind, T: int64(dp.Timestamp()), V: v})
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
// time. p.PID is -1 when the point has no valid pid, p.VPID 0 when it has no vpid.
func readProcess(attrs pcommon.Map, p *window.ProcessInfo) {
	p.PID = -1
	for k, v := range attrs.All() {
		switch k {
		case attrProcessPID:
			p.PID = intValue(v)
		case attrProcessVPID:
			p.VPID = max(intValue(v), 0)
		case attrPodName:
			p.PodName = strValue(v)
		case attrNamespace:
			p.Namespace = strValue(v)
		case attrContainerName:
			p.Container = strValue(v)
		case attrProcessName:
			p.Name = strValue(v)
		case attrContainerID:
			p.ContainerID = strValue(v)
		case attrPodUID:
			p.PodUID = strValue(v)
		case attrProcessType:
			p.Type = strValue(v)
		case attrSlurmJob:
			p.SlurmJob = strValue(v)
		case attrSlurmStep:
			p.SlurmStep = strValue(v)
		}
	}
}

// pointValue is the point's value as an integer; false for NaN, ±Inf and doubles beyond int64.
func pointValue(dp pmetric.NumberDataPoint) (int64, bool) {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
		f := math.Round(dp.DoubleValue())
		// 2^63 is the first double above MaxInt64; NaN fails both comparisons.
		if !(f >= math.MinInt64 && f < math.MaxInt64) {
			return 0, false
		}
		return int64(f), true
	}
	return dp.IntValue(), true
}

// numberPoints are a sum's or a gauge's points; other types hold none the window reads.
func numberPoints(m pmetric.Metric) (pmetric.NumberDataPointSlice, bool) {
	switch m.Type() {
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints(), true
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints(), true
	default:
		return pmetric.NumberDataPointSlice{}, false
	}
}

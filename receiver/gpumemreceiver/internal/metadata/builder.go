package metadata

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// MetricsBuilder assembles one scrape: a resource per GPU, each holding the enabled metrics.
// It is not safe for concurrent use; a scraper owns one.
type MetricsBuilder struct {
	enabled    [metricCount]bool
	resEnabled *ResourceSwitches
	startTime  pcommon.Timestamp
	version    string

	out     pmetric.Metrics
	metrics pmetric.MetricSlice
	current [metricCount]pmetric.NumberDataPointSlice
	started [metricCount]bool
	// enabledCount is how many metrics are on: the most one resource holds.
	enabledCount int
}

// NewMetricsBuilder reads the switches once so the hot path is an array lookup.
// startTime is the start of cumulative sums (the receiver's start).
func NewMetricsBuilder(cfg MetricsBuilderConfig, startTime pcommon.Timestamp, version string) *MetricsBuilder {
	mb := &MetricsBuilder{startTime: startTime, version: version, out: pmetric.NewMetrics(),
		resEnabled: NewResourceSwitches(cfg.ResourceAttributes)}
	for i, m := range Metrics {
		mb.enabled[i] = cfg.Metrics[m.Name].Enabled
		if mb.enabled[i] {
			mb.enabledCount++
		}
	}
	return mb
}

// Enabled says whether a metric is switched on, so callers can skip the NVML call behind it.
func (mb *MetricsBuilder) Enabled(id MetricID) bool { return mb.enabled[id] }

// ResourceSwitches are the resource attribute switches, read once from the config.
// Immutable after construction, so metrics and logs may share one.
type ResourceSwitches [resourceAttrCount]bool

// NewResourceSwitches reads the switches of cfg.
func NewResourceSwitches(cfg ResourceAttributesConfig) *ResourceSwitches {
	var s ResourceSwitches
	for i, a := range ResourceAttributes {
		s[i] = cfg[a.Name].Enabled
	}
	return &s
}

// Wrap returns a Resource that sets attributes on m, honouring the switches.
func (s *ResourceSwitches) Wrap(m pcommon.Map) Resource {
	return Resource{attrs: m, enabled: s}
}

// Resource is the attribute map of the resource being built; setters honour the switches.
type Resource struct {
	attrs   pcommon.Map
	enabled *ResourceSwitches
}

// SetStr sets a string resource attribute when it is enabled and non-empty.
func (r Resource) SetStr(id ResourceAttrID, v string) {
	if r.enabled[id] && v != "" {
		r.attrs.PutStr(ResourceAttributes[id].Name, v)
	}
}

// SetInt sets an int resource attribute when it is enabled.
func (r Resource) SetInt(id ResourceAttrID, v int64) {
	if r.enabled[id] {
		r.attrs.PutInt(ResourceAttributes[id].Name, v)
	}
}

// StartResource begins a new resource; data points recorded after it belong to it.
// The slices are sized once for what a resource holds, not grown append by append.
func (mb *MetricsBuilder) StartResource() Resource {
	rm := mb.out.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(ScopeName)
	sm.Scope().SetVersion(mb.version)
	mb.metrics = sm.Metrics()
	mb.metrics.EnsureCapacity(mb.enabledCount)
	mb.started = [metricCount]bool{}
	attrs := rm.Resource().Attributes()
	attrs.EnsureCapacity(int(resourceAttrCount))
	return mb.resEnabled.Wrap(attrs)
}

// Reserve sizes the data point slice of a metric of the current resource for n points, for
// a caller about to record many (one per process).
func (mb *MetricsBuilder) Reserve(id MetricID, n int) {
	if mb.enabled[id] && n > 1 {
		mb.dataPoints(id).EnsureCapacity(n)
	}
}

func (mb *MetricsBuilder) dataPoints(id MetricID) pmetric.NumberDataPointSlice {
	if !mb.started[id] {
		def := &Metrics[id]
		m := mb.metrics.AppendEmpty()
		m.SetName(def.Name)
		m.SetDescription(def.Description)
		m.SetUnit(def.Unit)
		mb.started[id] = true
		var dps pmetric.NumberDataPointSlice
		if def.Type == Gauge {
			dps = m.SetEmptyGauge().DataPoints()
		} else {
			s := m.SetEmptySum()
			s.SetIsMonotonic(def.Monotonic)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			dps = s.DataPoints()
		}
		if def.Points > 1 {
			dps.EnsureCapacity(def.Points)
		}
		mb.current[id] = dps
	}
	return mb.current[id]
}

// RecordInt adds an int data point; ok is false (and nothing is added) when the metric is off.
// The returned point takes the caller's data point attributes.
func (mb *MetricsBuilder) RecordInt(id MetricID, ts pcommon.Timestamp, v int64) (dp pmetric.NumberDataPoint, ok bool) {
	if !mb.enabled[id] {
		return dp, false
	}
	dp = mb.dataPoints(id).AppendEmpty()
	dp.SetTimestamp(ts)
	if Metrics[id].Type == Sum {
		dp.SetStartTimestamp(mb.startTime)
	}
	dp.SetIntValue(v)
	return dp, true
}

// RecordDouble adds a double data point; see RecordInt.
func (mb *MetricsBuilder) RecordDouble(id MetricID, ts pcommon.Timestamp, v float64) (dp pmetric.NumberDataPoint, ok bool) {
	if !mb.enabled[id] {
		return dp, false
	}
	dp = mb.dataPoints(id).AppendEmpty()
	dp.SetTimestamp(ts)
	if Metrics[id].Type == Sum {
		dp.SetStartTimestamp(mb.startTime)
	}
	dp.SetDoubleValue(v)
	return dp, true
}

// Emit returns what was built and starts afresh. Resources left without metrics are dropped.
func (mb *MetricsBuilder) Emit() pmetric.Metrics {
	out := mb.out
	out.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		return rm.ScopeMetrics().At(0).Metrics().Len() == 0
	})
	mb.out = pmetric.NewMetrics()
	mb.metrics = pmetric.MetricSlice{}
	return out
}

// Points returns the data points of a metric recorded so far for the current resource; ok is
// false when none were. Callers read them (the runway reads per-process memory) and must not
// keep them past the next StartResource.
func (mb *MetricsBuilder) Points(id MetricID) (pmetric.NumberDataPointSlice, bool) {
	if !mb.enabled[id] || !mb.started[id] {
		return pmetric.NumberDataPointSlice{}, false
	}
	return mb.current[id], true
}

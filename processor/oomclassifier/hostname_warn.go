package oomclassifier

import (
	"context"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
)

// This file warns when one pipeline's data carries host.name and the other's does not.

// The window and the records are keyed by host.name: when the metrics carry it and the logs
// do not (or the reverse), a record of node A never finds node A's GPU metrics. Data without
// it on both sides still meets (one host, nothing set anywhere), so that is left quiet.
// Each side's check sits between the side and its next consumer; the warning goes to the
// logger of the pipeline whose data lacks it (the collector's names it: otelcol.pipeline.id),
// once per side of a component id.

// hostNameChecks holds the pair of checks of each component id.
type hostNameChecks struct {
	mu   sync.Mutex
	byID map[component.ID]*hostNamePair
}

// hostNamePair is what both sides of one id have seen.
type hostNamePair struct {
	sides [2]hostNameSide // metrics, logs
}

type hostNameSide struct {
	signal        string
	logger        *zap.Logger // the first pipeline's of this side
	with, without atomic.Bool
	warned        atomic.Bool
	loggerOnce    sync.Once
}

const (
	sideMetrics = 0
	sideLogs    = 1
)

func (c *hostNameChecks) pair(id component.ID) *hostNamePair {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[component.ID]*hostNamePair{}
	}
	p, ok := c.byID[id]
	if !ok {
		p = &hostNamePair{}
		p.sides[sideMetrics].signal = "metrics"
		p.sides[sideLogs].signal = "logs"
		c.byID[id] = p
	}
	return p
}

// metrics wraps the metrics side's next consumer of id.
func (c *hostNameChecks) metrics(id component.ID, logger *zap.Logger, next consumer.Metrics) consumer.Metrics {
	p := c.pair(id)
	p.sides[sideMetrics].setLogger(logger)
	return &hostNameMetrics{Metrics: next, pair: p}
}

// logs wraps the logs side's next consumer of id.
func (c *hostNameChecks) logs(id component.ID, logger *zap.Logger, next consumer.Logs) consumer.Logs {
	p := c.pair(id)
	p.sides[sideLogs].setLogger(logger)
	return &hostNameLogs{Logs: next, pair: p}
}

func (s *hostNameSide) setLogger(l *zap.Logger) { s.loggerOnce.Do(func() { s.logger = l }) }

// observe records whether res names its host, then warns where one side has data without
// host.name while the other has data with it.
func (p *hostNamePair) observe(side int, res pcommon.Resource) {
	s := &p.sides[side]
	if v, ok := res.Attributes().Get(resHostName); ok && v.AsString() != "" {
		if s.with.Load() {
			return
		}
		s.with.Store(true)
	} else {
		if s.without.Load() {
			return
		}
		s.without.Store(true)
	}
	for i := range p.sides {
		lacking, other := &p.sides[i], &p.sides[1-i]
		if lacking.without.Load() && other.with.Load() && !lacking.warned.Swap(true) && lacking.logger != nil {
			lacking.logger.Warn("oom_classifier: "+lacking.signal+" without host.name on this pipeline while the "+other.signal+" carry it; a node's OOM records and GPU metrics meet only under the same host.name",
				zap.String("signal", lacking.signal),
				zap.String("fix", "set host.name the same way in every pipeline of oom_classifier: put host_identity in both pipelines (host_name: ${env:K8S_NODE_NAME} on Kubernetes; the machine's hostname on a host), and OTEL_RESOURCE_ATTRIBUTES=host.name=<node> in an application's SDK"))
		}
	}
}

type hostNameMetrics struct {
	consumer.Metrics
	pair *hostNamePair
}

func (h *hostNameMetrics) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	s := &h.pair.sides[sideMetrics]
	if !(s.with.Load() && s.without.Load()) {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			h.pair.observe(sideMetrics, md.ResourceMetrics().At(i).Resource())
		}
	}
	return h.Metrics.ConsumeMetrics(ctx, md)
}

type hostNameLogs struct {
	consumer.Logs
	pair *hostNamePair
}

func (h *hostNameLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	s := &h.pair.sides[sideLogs]
	if !(s.with.Load() && s.without.Load()) {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			h.pair.observe(sideLogs, ld.ResourceLogs().At(i).Resource())
		}
	}
	return h.Logs.ConsumeLogs(ctx, ld)
}

package oomclassifier

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
)

// This file warns, once per pipeline, when data passes without host.name.

// hostNameCheck sits between a side and its next consumer and warns once, on the first batch
// that holds a resource without host.name (absent or ""), in the logger of the pipeline it was
// created for (the collector's logger names the pipeline: otelcol.pipeline.id). The window
// and the records are keyed by host.name, so a pipeline without it meets only data that
// lacks it too: a record of node A would never find node A's GPU metrics.
type hostNameCheck struct {
	logger *zap.Logger
	signal string // "metrics" or "logs": what the message calls the data
	warned atomic.Bool
}

func newHostNameCheck(logger *zap.Logger, signal string) *hostNameCheck {
	return &hostNameCheck{logger: logger, signal: signal}
}

// seen warns the first time res has no host.name; afterwards it does nothing.
func (c *hostNameCheck) seen(res pcommon.Resource) bool {
	if v, ok := res.Attributes().Get(resHostName); ok && v.AsString() != "" {
		return false
	}
	if c.warned.Swap(true) {
		return true
	}
	c.logger.Warn("oom_classifier: "+c.signal+" without host.name on this pipeline; metrics and OOM records of one node meet only when both carry the same host.name",
		zap.String("signal", c.signal),
		zap.String("fix", "put resourcedetection (detectors [env, system]; on Kubernetes OTEL_RESOURCE_ATTRIBUTES=host.name=$(K8S_NODE_NAME)) before oom_classifier in every pipeline, or set host.name with the resource processor"))
	return true
}

// metrics wraps next so that each batch is checked before it is passed on.
func (c *hostNameCheck) metrics(next consumer.Metrics) consumer.Metrics {
	return &hostNameMetrics{Metrics: next, check: c}
}

// logs wraps next so that each batch is checked before it is passed on.
func (c *hostNameCheck) logs(next consumer.Logs) consumer.Logs {
	return &hostNameLogs{Logs: next, check: c}
}

type hostNameMetrics struct {
	consumer.Metrics
	check *hostNameCheck
}

func (h *hostNameMetrics) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	if !h.check.warned.Load() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			if h.check.seen(md.ResourceMetrics().At(i).Resource()) {
				break
			}
		}
	}
	return h.Metrics.ConsumeMetrics(ctx, md)
}

type hostNameLogs struct {
	consumer.Logs
	check *hostNameCheck
}

func (h *hostNameLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if !h.check.warned.Load() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			if h.check.seen(ld.ResourceLogs().At(i).Resource()) {
				break
			}
		}
	}
	return h.Logs.ConsumeLogs(ctx, ld)
}

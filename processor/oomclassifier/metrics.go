package oomclassifier

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

// processMetrics observes the batch into the shared window and passes it on unchanged.
func (in *instance) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	buf := in.bufPool.Get().(*observeBuf)
	of := observeMetrics(md, in.store, buf)
	in.bufPool.Put(buf)
	in.recordOverflow(ctx, of)
	in.wake()
	return md, nil
}

var _ processorhelper.ProcessMetricsFunc = (*instance)(nil).processMetrics

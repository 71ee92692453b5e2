package oomclassifier

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// processMetrics observes the batch into the shared window and passes it on unchanged.
func (in *instance) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	bufp := in.bufPool.Get().(*[]window.Sample)
	var of window.Overflow
	*bufp, of = observeMetrics(md, in.store, *bufp)
	in.bufPool.Put(bufp)
	in.recordOverflow(ctx, of)
	in.wake()
	return md, nil
}

var _ processorhelper.ProcessMetricsFunc = (*instance)(nil).processMetrics

package oomclassifier

import "go.uber.org/zap"

// This file knows which pipelines the id sits in.

// warnIfLogsOnly warns once per id when the processor was created in no metrics pipeline:
// its window then stays empty and every OOM it sees is classified from the message alone,
// mostly as unknown. The collector creates every pipeline's components before it starts
// any, so by the logs side's Start the flag is final.
func (in *instance) warnIfLogsOnly() {
	if in.metricsSide.Load() {
		return
	}
	in.logsOnlyOnce.Do(func() {
		in.logger.Warn("oom_classifier is in a logs pipeline only: it receives no GPU metrics, so OOMs are classified from their message alone (mostly unknown)",
			zap.String("fix", "add the same oom_classifier id to the metrics pipeline that carries the gpu_mem receiver's metrics"))
	})
}

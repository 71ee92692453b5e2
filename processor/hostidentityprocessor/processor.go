package hostidentityprocessor

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor/internal/metadata"
)

// instance is one component id's processor, shared by its traces, metrics and logs sides so
// that every pipeline stamps the same identity and the start-up line is logged once.
type instance struct {
	cfg    *Config
	logger *zap.Logger
	src    sources

	mu       sync.Mutex
	resolved bool
	id       identity
}

func newInstance(cfg *Config, logger *zap.Logger, src sources) *instance {
	return &instance{cfg: cfg, logger: logger, src: src}
}

// start resolves the identity on the first side's Start; the other sides reuse it.
func (in *instance) start(context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.resolved {
		return nil
	}
	id, err := resolve(in.cfg, in.src)
	if err != nil {
		return err
	}
	in.id, in.resolved = id, true
	fields := []zap.Field{zap.String("host_name", id.hostName), zap.String("source", id.nameSource)}
	if in.cfg.HostID {
		if id.hostID == "" {
			fields = append(fields, zap.String("host_id", ""), zap.Strings("host_id_not_found_in", in.src.machineIDPaths))
		} else {
			fields = append(fields, zap.String("host_id", id.hostID), zap.String("host_id_source", id.idSource))
		}
	}
	in.logger.Info("host_identity: resources without host.name get this one", fields...)
	return nil
}

// stamp sets the identity on one resource where it lacks it: an absent or empty attribute
// is filled, any other value is kept.
func (in *instance) stamp(res pcommon.Resource) {
	attrs := res.Attributes()
	putIfMissing(attrs, metadata.AttributeHostName, in.id.hostName)
	if in.id.hostID != "" {
		putIfMissing(attrs, metadata.AttributeHostID, in.id.hostID)
	}
}

func putIfMissing(attrs pcommon.Map, key, value string) {
	if v, ok := attrs.Get(key); ok && v.AsString() != "" {
		return
	}
	attrs.PutStr(key, value)
}

func (in *instance) processMetrics(_ context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		in.stamp(rms.At(i).Resource())
	}
	return md, nil
}

func (in *instance) processLogs(_ context.Context, ld plog.Logs) (plog.Logs, error) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		in.stamp(rls.At(i).Resource())
	}
	return ld, nil
}

func (in *instance) processTraces(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		in.stamp(rss.At(i).Resource())
	}
	return td, nil
}

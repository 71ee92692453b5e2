package podresources

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zapgrpc"
	"google.golang.org/grpc/grpclog"
)

// quietGRPC raises gRPC's own log to ERROR. The collector bridges it to its log at WARN, and
// gRPC's transport warns at every reconnect attempt to a kubelet that hangs, answers
// garbage or is gone: four to seven lines per outage, against the source's one. gRPC's
// logger is one per process, so this holds for every component's gRPC; its errors still
// reach the log, and the source reports its own state changes. Called at every Start: the
// collector installs its own bridge again when it reloads its configuration.
func quietGRPC(logger *zap.Logger) {
	l := logger.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		if up, err := zapcore.NewIncreaseLevelCore(c, zapcore.ErrorLevel); err == nil {
			return up
		}
		return c // a core already above ERROR (or a no-op one)
	}), zap.AddCallerSkip(5)).With(zap.Bool("grpc_log", true))
	grpclog.SetLoggerV2(fixedVerbosity{zapgrpc.NewLogger(l)})
}

// fixedVerbosity answers gRPC's verbosity checks (V) with its default, 0, as the collector's
// own bridge does: zapgrpc maps V onto zap levels and would turn per-RPC chatter on.
type fixedVerbosity struct{ grpclog.LoggerV2 }

func (fixedVerbosity) V(level int) bool { return level <= 0 }

package gpumemreceiver

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receiverhelper"
	"go.opentelemetry.io/otel/metric"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// xidFormat names what the Xid path receives, for the receiver's standard telemetry.
const xidFormat = "nvidia_xid"

// xidTelemetry is what the Xid path tells the collector's own telemetry: the records the
// next consumer accepted or refused (otelcol_receiver_accepted_log_records and
// _refused_log_records, through receiverhelper.ObsReport like every receiver) and the Xids
// dropped on a full queue, which would otherwise be one log line and a total at shutdown.
type xidTelemetry struct {
	obsrep  *receiverhelper.ObsReport
	dropped metric.Int64Counter
}

func newXidTelemetry(set receiver.Settings) (*xidTelemetry, error) {
	obsrep, err := receiverhelper.NewObsReport(receiverhelper.ObsReportSettings{
		ReceiverID:             set.ID,
		ReceiverCreateSettings: set,
	})
	if err != nil {
		return nil, fmt.Errorf("create the Xid path's telemetry: %w", err)
	}
	def := metadata.TelemetryXidEventsDropped
	dropped, err := set.MeterProvider.Meter(metadata.ScopeName).Int64Counter(def.Name,
		metric.WithDescription(def.Description), metric.WithUnit(def.Unit))
	if err != nil {
		return nil, fmt.Errorf("create the Xid path's telemetry: %w", err)
	}
	return &xidTelemetry{obsrep: obsrep, dropped: dropped}, nil
}

// send hands ld to next, counting its records as accepted or refused.
func (t *xidTelemetry) send(next consumer.Logs, ld plog.Logs) error {
	ctx := t.obsrep.StartLogsOp(context.Background())
	n := ld.LogRecordCount() // before: next may take ld over
	err := next.ConsumeLogs(ctx, ld)
	t.obsrep.EndLogsOp(ctx, xidFormat, n, err)
	return err
}

// drop counts one Xid lost to a full queue.
func (t *xidTelemetry) drop() {
	if t != nil {
		t.dropped.Add(context.Background(), 1)
	}
}

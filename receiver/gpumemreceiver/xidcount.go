package gpumemreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// recordXids emits nvidia.gpu.xid.errors of a device: one point per code seen (counted in
// d.Xids by the Xid source), in code order so output is stable.
func recordXids(mb *metadata.MetricsBuilder, d *nvmlx.Device, ts pcommon.Timestamp) {
	if !mb.Enabled(metadata.NvidiaGpuXidErrors) {
		return
	}
	d.Xids.Each(func(code int, count int64) {
		if dp, ok := mb.RecordInt(metadata.NvidiaGpuXidErrors, ts, count); ok {
			dp.Attributes().PutInt(metadata.AttrNvidiaGpuXid, int64(code))
		}
	})
}

package gpumemreceiver

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// hwStates are semconv's hw.state values for hw.status, in the order they are recorded.
var hwStates = [...]string{metadata.AttrHwStateOk, metadata.AttrHwStateDegraded, metadata.AttrHwStateFailed}

// recordStatus records hw.status of a GPU: one point per state, 1 for the current one
// (semconv's hw.status is an UpDownCounter of that shape). Failed for a lost GPU, degraded
// while a page retirement or a row remapping waits for a reset, ok otherwise.
func recordStatus(mb *metadata.MetricsBuilder, d *nvmlx.Device, st *deviceState, ts pcommon.Timestamp) {
	if !mb.Enabled(metadata.HwStatus) {
		return
	}
	current := metadata.AttrHwStateOk
	switch {
	case d.Lost():
		current = metadata.AttrHwStateFailed
	case st.retired.pending || st.remapped.pending:
		current = metadata.AttrHwStateDegraded
	}
	for _, state := range hwStates {
		if dp, ok := mb.RecordInt(metadata.HwStatus, ts, boolInt(state == current)); ok {
			attrs := dp.Attributes()
			attrs.EnsureCapacity(2)
			attrs.PutStr(metadata.AttrHwType, metadata.AttrHwTypeGpu)
			attrs.PutStr(metadata.AttrHwState, state)
		}
	}
}

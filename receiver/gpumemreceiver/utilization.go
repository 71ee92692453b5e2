package gpumemreceiver

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// utilizationState is the utilization concern's per-device state: whether the call works.
type utilizationState struct{ rates nvmlx.Support }

func (st *utilizationState) probe(d *nvmlx.Device) {
	st.rates = d.Initial(nvmlx.CallUtilizationRates)
}

// recordUtilization records the SM busy fraction; a failed read costs that one metric.
func recordUtilization(mb *metadata.MetricsBuilder, d *nvmlx.Device, st *utilizationState, ts pcommon.Timestamp) (lost int, err error) {
	if !mb.Enabled(metadata.HwGpuUtilization) {
		return 0, nil
	}
	frac, ok, err := readUtilization(d, st)
	if err != nil {
		return 1, err
	}
	if ok {
		if dp, ok := mb.RecordDouble(metadata.HwGpuUtilization, ts, frac); ok {
			dp.Attributes().PutStr(metadata.AttrHwGpuTask, metadata.AttrHwGpuTaskGeneral)
		}
	}
	return 0, nil
}

// readUtilization returns the SM busy fraction (0..1); ok is false when the device lacks it.
func readUtilization(d *nvmlx.Device, st *utilizationState) (frac float64, ok bool, err error) {
	if st.rates == nvmlx.Unsupported {
		return 0, false, nil
	}
	u, r := d.Handle.GetUtilizationRates()
	if ok, err = st.rates.Check(r); err != nil {
		return 0, false, fmt.Errorf("read utilization of GPU %s: %w", d.UUID, err)
	}
	return float64(u.Gpu) / 100, ok, nil
}

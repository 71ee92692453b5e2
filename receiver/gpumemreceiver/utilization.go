package gpumemreceiver

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// recordUtilization records the SM busy fraction; a failed read costs that one metric.
func (s *metricsScraper) recordUtilization(d *nvmlx.Device, ts pcommon.Timestamp) (lost int, err error) {
	if !s.mb.Enabled(metadata.HwGpuUtilization) {
		return 0, nil
	}
	frac, ok, err := readUtilization(d)
	if err != nil {
		return 1, err
	}
	if ok {
		if dp, ok := s.mb.RecordDouble(metadata.HwGpuUtilization, ts, frac); ok {
			dp.Attributes().PutStr(metadata.AttrHwGpuTask, metadata.AttrHwGpuTaskGeneral)
		}
	}
	return 0, nil
}

// readUtilization returns the SM busy fraction (0..1); ok is false when the device lacks it.
func readUtilization(d *nvmlx.Device) (frac float64, ok bool, err error) {
	if d.Support.Utilization == nvmlx.Unsupported {
		return 0, false, nil
	}
	u, r := d.Handle.GetUtilizationRates()
	if ok, err = d.Support.Utilization.Check(r); err != nil {
		return 0, false, fmt.Errorf("read utilization of GPU %s: %w", d.UUID, err)
	}
	return float64(u.Gpu) / 100, ok, nil
}

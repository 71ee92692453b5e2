package gpumemreceiver

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// recordUtilization records the SM busy fraction; a failed read costs that one metric.
func (s *metricsScraper) recordUtilization(d *device, ts pcommon.Timestamp) (lost int, err error) {
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
func readUtilization(d *device) (frac float64, ok bool, err error) {
	if d.utilization == unsupported {
		return 0, false, nil
	}
	u, r := d.handle.GetUtilizationRates()
	if ok, err = d.utilization.check(r); err != nil {
		return 0, false, fmt.Errorf("read utilization of GPU %s: %w", d.uuid, err)
	}
	return float64(u.Gpu) / 100, ok, nil
}

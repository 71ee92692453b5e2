package gpumemreceiver

import "fmt"

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

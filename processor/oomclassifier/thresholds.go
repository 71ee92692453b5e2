package oomclassifier

import "github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"

// defaultThresholds is the classifier's own defaults in configuration form, so that the
// defaults live in one place (internal/classify) and the YAML shows them.
func defaultThresholds() ThresholdsConfig {
	d := classify.DefaultThresholds()
	return ThresholdsConfig{
		MaxSampleAge:            d.MaxSampleAge,
		XidBefore:               d.XidBefore,
		XidAfter:                d.XidAfter,
		ZombieMinBytes:          d.ZombieMinBytes,
		ZombieMinFraction:       d.ZombieMinFraction,
		TenantMinBytes:          d.TenantMinBytes,
		TenantMinFraction:       d.TenantMinFraction,
		WorkerMinCount:          d.WorkerMinCount,
		WorkerMaxBytes:          d.WorkerMaxBytes,
		WorkerMinFraction:       d.WorkerMinFraction,
		FragmentationMinBytes:   d.FragMinBytes,
		FragmentationMinFrac:    d.FragMinFraction,
		LeakMinDuration:         d.LeakMinDuration,
		LeakMinPoints:           d.LeakMinPoints,
		LeakMinSlopeBytesPerSec: d.LeakMinSlope,
		LeakMinGrowthFraction:   d.LeakMinGrowthFraction,
		LeakMinR2:               d.LeakMinR2,
		RetiredPageBytes:        d.RetiredPageBytes,
		SpecShortfallFraction:   d.SpecShortfallFraction,
		FullFraction:            d.FullFraction,
		DenseFraction:           d.DenseFraction,
		// SpecTotals stays empty: entries given in YAML add to or override the built-in table.
	}
}

// toClassify applies the configured thresholds over the classifier's defaults.
func (t ThresholdsConfig) toClassify() classify.Thresholds {
	d := classify.DefaultThresholds()
	d.MaxSampleAge = t.MaxSampleAge
	d.XidBefore, d.XidAfter = t.XidBefore, t.XidAfter
	d.ZombieMinBytes, d.ZombieMinFraction = t.ZombieMinBytes, t.ZombieMinFraction
	d.TenantMinBytes, d.TenantMinFraction = t.TenantMinBytes, t.TenantMinFraction
	d.WorkerMinCount, d.WorkerMaxBytes, d.WorkerMinFraction = t.WorkerMinCount, t.WorkerMaxBytes, t.WorkerMinFraction
	d.FragMinBytes, d.FragMinFraction = t.FragmentationMinBytes, t.FragmentationMinFrac
	d.LeakMinDuration, d.LeakMinSlope = t.LeakMinDuration, t.LeakMinSlopeBytesPerSec
	d.LeakMinPoints = t.LeakMinPoints
	d.LeakMinGrowthFraction, d.LeakMinR2 = t.LeakMinGrowthFraction, t.LeakMinR2
	d.RetiredPageBytes, d.SpecShortfallFraction = t.RetiredPageBytes, t.SpecShortfallFraction
	d.FullFraction, d.DenseFraction = t.FullFraction, t.DenseFraction
	if len(t.SpecTotals) > 0 {
		merged := make(map[string]int64, len(d.SpecTotals)+len(t.SpecTotals))
		for k, v := range d.SpecTotals {
			merged[k] = v
		}
		for k, v := range t.SpecTotals {
			merged[k] = v
		}
		d.SpecTotals = merged
	}
	return d
}

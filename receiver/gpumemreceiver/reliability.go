package gpumemreceiver

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// Which GPUs answer what (NVML API reference):
//   - page retirement (GetRetiredPages, GetRetiredPagesPendingStatus): Kepler to Volta data
//     center parts with ECC; Ampere and later answer NOT_SUPPORTED (row remapping replaced it).
//   - row remapping (GetRemappedRows): Ampere (A100, A30) and later data center parts; earlier
//     and consumer parts answer NOT_SUPPORTED.
//   - ECC mode and counters (GetEccMode, GetTotalEccErrors): data center and workstation parts;
//     consumer parts answer NOT_SUPPORTED, and the counters also when ECC is off.
// Each is probed once per device; NOT_SUPPORTED switches it off quietly.

var retirementCauses = [...]struct {
	cause nvml.PageRetirementCause
	name  string
}{
	{nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, metadata.AttrNvidiaGpuRetirementCauseSingleBitEcc},
	{nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, metadata.AttrNvidiaGpuRetirementCauseDoubleBitEcc},
}

// What a failed read costs (cpuscraper's metricsLen): a call that fails also skips the
// calls after it in the same recorder.
const (
	retiredPagesMetricsLen = 2 // retired_pages, retired_pages.pending
	remappedRowsMetricsLen = 3 // remapped_rows, .pending, .failed
	eccMetricsLen          = 2 // ecc.mode, hw.errors
)

func (s *metricsScraper) recordRetiredPages(d *nvmlx.Device, ts pcommon.Timestamp) (lost int, err error) {
	if d.Support.RetiredPages != nvmlx.Unsupported && s.mb.Enabled(metadata.NvidiaGpuMemoryRetiredPages) {
		for _, c := range retirementCauses {
			pages, r := d.Handle.GetRetiredPages(c.cause)
			ok, err := d.Support.RetiredPages.Check(r)
			if err != nil {
				return retiredPagesMetricsLen, fmt.Errorf("read retired pages of GPU %s: %w", d.UUID, err)
			}
			if !ok {
				break
			}
			if dp, ok := s.mb.RecordInt(metadata.NvidiaGpuMemoryRetiredPages, ts, int64(len(pages))); ok {
				dp.Attributes().PutStr(metadata.AttrNvidiaGpuRetirementCause, c.name)
			}
		}
	}
	// hw.status needs the pending flag too (degraded).
	if d.Support.RetiredPending != nvmlx.Unsupported && (s.mb.Enabled(metadata.NvidiaGpuMemoryRetiredPagesPending) || s.mb.Enabled(metadata.HwStatus)) {
		state, r := d.Handle.GetRetiredPagesPendingStatus()
		ok, err := d.Support.RetiredPending.Check(r)
		if err != nil {
			return 1, fmt.Errorf("read retired pages pending status of GPU %s: %w", d.UUID, err)
		}
		if ok {
			d.RetirementPending = state == nvml.FEATURE_ENABLED
			s.mb.RecordInt(metadata.NvidiaGpuMemoryRetiredPagesPending, ts, boolInt(d.RetirementPending))
		}
	}
	return 0, nil
}

func (s *metricsScraper) recordRemappedRows(d *nvmlx.Device, ts pcommon.Timestamp) (lost int, err error) {
	if d.Support.RemappedRows == nvmlx.Unsupported || !(s.mb.Enabled(metadata.NvidiaGpuMemoryRemappedRows) ||
		s.mb.Enabled(metadata.NvidiaGpuMemoryRemappedRowsPending) || s.mb.Enabled(metadata.NvidiaGpuMemoryRemappedRowsFailed) ||
		s.mb.Enabled(metadata.HwStatus)) {
		return 0, nil
	}
	corrected, uncorrected, pending, failed, r := d.Handle.GetRemappedRows()
	ok, err := d.Support.RemappedRows.Check(r)
	if err != nil {
		return remappedRowsMetricsLen, fmt.Errorf("read remapped rows of GPU %s: %w", d.UUID, err)
	}
	if !ok {
		return 0, nil
	}
	d.RemapPending = pending
	if dp, ok := s.mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRows, ts, int64(corrected)); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuRemapType, metadata.AttrNvidiaGpuRemapTypeCorrectable)
	}
	if dp, ok := s.mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRows, ts, int64(uncorrected)); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuRemapType, metadata.AttrNvidiaGpuRemapTypeUncorrectable)
	}
	s.mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRowsPending, ts, boolInt(pending))
	s.mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRowsFailed, ts, boolInt(failed))
	return 0, nil
}

var eccErrorTypes = [2]struct {
	typ  nvml.MemoryErrorType
	name string
}{
	{nvml.MEMORY_ERROR_TYPE_CORRECTED, metadata.AttrErrorTypeCorrected},
	{nvml.MEMORY_ERROR_TYPE_UNCORRECTED, metadata.AttrErrorTypeUncorrected},
}

func (s *metricsScraper) recordECC(d *nvmlx.Device, ts pcommon.Timestamp) (lost int, err error) {
	if d.Support.ECCMode != nvmlx.Unsupported && s.mb.Enabled(metadata.NvidiaGpuEccMode) {
		current, _, r := d.Handle.GetEccMode()
		ok, err := d.Support.ECCMode.Check(r)
		if err != nil {
			return eccMetricsLen, fmt.Errorf("read ECC mode of GPU %s: %w", d.UUID, err)
		}
		if ok {
			s.mb.RecordInt(metadata.NvidiaGpuEccMode, ts, boolInt(current == nvml.FEATURE_ENABLED))
		}
	}
	if d.Support.ECCErrors == nvmlx.Unsupported || !s.mb.Enabled(metadata.HwErrors) {
		return 0, nil
	}
	var counts [2]uint64
	for i, e := range eccErrorTypes {
		n, r := d.Handle.GetTotalEccErrors(e.typ, nvml.VOLATILE_ECC)
		ok, err := d.Support.ECCErrors.Check(r)
		if err != nil {
			return 1, fmt.Errorf("read volatile ECC errors of GPU %s: %w", d.UUID, err)
		}
		if !ok {
			return 0, nil
		}
		counts[i] = n
	}
	if d.ECCStart == 0 || counts[0] < d.ECCLast[0] || counts[1] < d.ECCLast[1] {
		d.ECCStart = ts
	}
	d.ECCLast = counts
	for i, e := range eccErrorTypes {
		if dp, ok := s.mb.RecordInt(metadata.HwErrors, ts, int64(counts[i])); ok {
			dp.SetStartTimestamp(d.ECCStart)
			attrs := dp.Attributes()
			attrs.EnsureCapacity(2)
			attrs.PutStr(metadata.AttrHwType, metadata.AttrHwTypeGpu)
			attrs.PutStr(metadata.AttrErrorType, e.name)
		}
	}
	return 0, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

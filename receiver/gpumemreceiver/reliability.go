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

// retiredPagesState is the page retirement concern's per-device state: whether each call
// works, and whether a retirement waits for a reset (hw.status degraded).
type retiredPagesState struct {
	pages, status nvmlx.Support
	pending       bool
}

func (st *retiredPagesState) probe(d *nvmlx.Device) {
	st.pages, st.status = d.Initial(nvmlx.CallRetiredPages), d.Initial(nvmlx.CallRetiredPagesStatus)
	st.pending = false
}

// remappedRowsState is the row remapping concern's per-device state: whether the call
// works, and whether a remapping waits for a reset (hw.status degraded).
type remappedRowsState struct {
	rows    nvmlx.Support
	pending bool
}

func (st *remappedRowsState) probe(d *nvmlx.Device) {
	st.rows, st.pending = d.Initial(nvmlx.CallRemappedRows), false
}

// eccState is the ECC concern's per-device state: whether each call works, and the start
// time of the volatile counters: the first scrape, moved on when a counter goes down (the
// driver was reloaded and the counters reset). The start and last counts outlive a probe.
type eccState struct {
	mode, errors nvmlx.Support
	start        pcommon.Timestamp
	last         [2]uint64
}

func (st *eccState) probe(d *nvmlx.Device) {
	st.mode, st.errors = d.Initial(nvmlx.CallEccMode), d.Initial(nvmlx.CallTotalEccErrors)
}

func recordRetiredPages(mb *metadata.MetricsBuilder, d *nvmlx.Device, st *retiredPagesState, ts pcommon.Timestamp) (lost int, err error) {
	if st.pages != nvmlx.Unsupported && mb.Enabled(metadata.NvidiaGpuMemoryRetiredPages) {
		for _, c := range retirementCauses {
			pages, r := d.Handle.GetRetiredPages(c.cause)
			ok, err := st.pages.Check(r)
			if err != nil {
				return retiredPagesMetricsLen, fmt.Errorf("read retired pages of GPU %s: %w", d.UUID, err)
			}
			if !ok {
				break
			}
			if dp, ok := mb.RecordInt(metadata.NvidiaGpuMemoryRetiredPages, ts, int64(len(pages))); ok {
				dp.Attributes().PutStr(metadata.AttrNvidiaGpuRetirementCause, c.name)
			}
		}
	}
	// hw.status needs the pending flag too (degraded).
	if st.status != nvmlx.Unsupported && (mb.Enabled(metadata.NvidiaGpuMemoryRetiredPagesPending) || mb.Enabled(metadata.HwStatus)) {
		state, r := d.Handle.GetRetiredPagesPendingStatus()
		ok, err := st.status.Check(r)
		if err != nil {
			return 1, fmt.Errorf("read retired pages pending status of GPU %s: %w", d.UUID, err)
		}
		if ok {
			st.pending = state == nvml.FEATURE_ENABLED
			mb.RecordInt(metadata.NvidiaGpuMemoryRetiredPagesPending, ts, boolInt(st.pending))
		}
	}
	return 0, nil
}

func recordRemappedRows(mb *metadata.MetricsBuilder, d *nvmlx.Device, st *remappedRowsState, ts pcommon.Timestamp) (lost int, err error) {
	if st.rows == nvmlx.Unsupported || !(mb.Enabled(metadata.NvidiaGpuMemoryRemappedRows) ||
		mb.Enabled(metadata.NvidiaGpuMemoryRemappedRowsPending) || mb.Enabled(metadata.NvidiaGpuMemoryRemappedRowsFailed) ||
		mb.Enabled(metadata.HwStatus)) {
		return 0, nil
	}
	corrected, uncorrected, pending, failed, r := d.Handle.GetRemappedRows()
	ok, err := st.rows.Check(r)
	if err != nil {
		return remappedRowsMetricsLen, fmt.Errorf("read remapped rows of GPU %s: %w", d.UUID, err)
	}
	if !ok {
		return 0, nil
	}
	st.pending = pending
	if dp, ok := mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRows, ts, int64(corrected)); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuRemapType, metadata.AttrNvidiaGpuRemapTypeCorrectable)
	}
	if dp, ok := mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRows, ts, int64(uncorrected)); ok {
		dp.Attributes().PutStr(metadata.AttrNvidiaGpuRemapType, metadata.AttrNvidiaGpuRemapTypeUncorrectable)
	}
	mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRowsPending, ts, boolInt(pending))
	mb.RecordInt(metadata.NvidiaGpuMemoryRemappedRowsFailed, ts, boolInt(failed))
	return 0, nil
}

var eccErrorTypes = [2]struct {
	typ  nvml.MemoryErrorType
	name string
}{
	{nvml.MEMORY_ERROR_TYPE_CORRECTED, metadata.AttrErrorTypeCorrected},
	{nvml.MEMORY_ERROR_TYPE_UNCORRECTED, metadata.AttrErrorTypeUncorrected},
}

func recordECC(mb *metadata.MetricsBuilder, d *nvmlx.Device, st *eccState, ts pcommon.Timestamp) (lost int, err error) {
	if st.mode != nvmlx.Unsupported && mb.Enabled(metadata.NvidiaGpuEccMode) {
		current, _, r := d.Handle.GetEccMode()
		ok, err := st.mode.Check(r)
		if err != nil {
			return eccMetricsLen, fmt.Errorf("read ECC mode of GPU %s: %w", d.UUID, err)
		}
		if ok {
			mb.RecordInt(metadata.NvidiaGpuEccMode, ts, boolInt(current == nvml.FEATURE_ENABLED))
		}
	}
	if st.errors == nvmlx.Unsupported || !mb.Enabled(metadata.HwErrors) {
		return 0, nil
	}
	var counts [2]uint64
	for i, e := range eccErrorTypes {
		n, r := d.Handle.GetTotalEccErrors(e.typ, nvml.VOLATILE_ECC)
		ok, err := st.errors.Check(r)
		if err != nil {
			return 1, fmt.Errorf("read volatile ECC errors of GPU %s: %w", d.UUID, err)
		}
		if !ok {
			return 0, nil
		}
		counts[i] = n
	}
	if st.start == 0 || counts[0] < st.last[0] || counts[1] < st.last[1] {
		st.start = ts
	}
	st.last = counts
	for i, e := range eccErrorTypes {
		if dp, ok := mb.RecordInt(metadata.HwErrors, ts, int64(counts[i])); ok {
			dp.SetStartTimestamp(st.start)
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

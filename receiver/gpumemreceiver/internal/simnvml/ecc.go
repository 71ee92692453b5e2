package simnvml

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Page addresses the simulator reports: page-aligned, distinct per cause.
const (
	pageSize        = 4096
	sbePageBase     = 0x2_0000_0000
	dbePageBase     = 0x4_0000_0000
	maxRetiredPages = 4096
)

func (d *device) retiredCount(cause nvml.PageRetirementCause) (int, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.retiredPages {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	t, _ := d.now()
	switch cause {
	case nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS:
		return int(min(toUint(d.gpu.RetiredPages.SingleBitECC.At(t)), maxRetiredPages)), nvml.SUCCESS
	case nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR:
		return int(min(toUint(d.gpu.RetiredPages.DoubleBitECC.At(t)), maxRetiredPages)), nvml.SUCCESS
	default:
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
}

func pageAddresses(cause nvml.PageRetirementCause, n int) []uint64 {
	base := uint64(sbePageBase)
	if cause == nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR {
		base = dbePageBase
	}
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = base + uint64(i)*pageSize
	}
	return addrs
}

// GetRetiredPages lists the addresses of pages retired for cause.
func (d *device) GetRetiredPages(cause nvml.PageRetirementCause) ([]uint64, nvml.Return) {
	n, ret := d.retiredCount(cause)
	if ret != nvml.SUCCESS {
		return nil, ret
	}
	return pageAddresses(cause, n), nvml.SUCCESS
}

// GetRetiredPages_v2 adds retirement timestamps (seconds since the epoch):
// the simulator dates every page at its start.
func (d *device) GetRetiredPages_v2(cause nvml.PageRetirementCause) ([]uint64, []uint64, nvml.Return) {
	n, ret := d.retiredCount(cause)
	if ret != nvml.SUCCESS {
		return nil, nil, ret
	}
	stamps := make([]uint64, n)
	for i := range stamps {
		stamps[i] = uint64(max(d.sim.start.Unix(), 0))
	}
	return pageAddresses(cause, n), stamps, nvml.SUCCESS
}

func (d *device) GetRetiredPagesPendingStatus() (nvml.EnableState, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.retiredPages {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	t, _ := d.now()
	return enableState(d.gpu.RetiredPages.Pending.At(t) > 0), nvml.SUCCESS
}

// GetRemappedRows answers (correctable, uncorrectable, pending, failed).
func (d *device) GetRemappedRows() (int, int, bool, bool, nvml.Return) {
	if !d.sim.up() {
		return 0, 0, false, false, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.remappedRows {
		return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED
	}
	t, _ := d.now()
	r := &d.gpu.RemappedRows
	return int(toUint(r.Correctable.At(t))), int(toUint(r.Uncorrectable.At(t))),
		r.Pending.At(t) > 0, r.Failed.At(t) > 0, nvml.SUCCESS
}

// GetEccMode answers (current, pending); the simulator never has a change pending.
func (d *device) GetEccMode() (nvml.EnableState, nvml.EnableState, nvml.Return) {
	if !d.sim.up() {
		return 0, 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.ecc {
		return 0, 0, nvml.ERROR_NOT_SUPPORTED
	}
	m := enableState(*d.gpu.ECCMode)
	return m, m, nvml.SUCCESS
}

// GetTotalEccErrors answers the same count for volatile and aggregate
// counters. Counts grow across loops (see ECCErrors). With ECC off the counters
// do not exist, as on a real board.
func (d *device) GetTotalEccErrors(errType nvml.MemoryErrorType, counter nvml.EccCounterType) (uint64, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.ecc || !*d.gpu.ECCMode {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	if counter != nvml.VOLATILE_ECC && counter != nvml.AGGREGATE_ECC {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	var s Series
	switch errType {
	case nvml.MEMORY_ERROR_TYPE_CORRECTED:
		s = d.gpu.ECCErrors.Corrected
	case nvml.MEMORY_ERROR_TYPE_UNCORRECTED:
		s = d.gpu.ECCErrors.Uncorrected
	default:
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	t, loop := d.now()
	return uint64(loop)*toUint(s.At(d.sim.scn.Duration)) + toUint(s.At(t)), nvml.SUCCESS
}

func enableState(on bool) nvml.EnableState {
	if on {
		return nvml.FEATURE_ENABLED
	}
	return nvml.FEATURE_DISABLED
}

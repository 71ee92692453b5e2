package gpumemreceiver

import "github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"

// deviceState is what the scrape concerns keep of one device from one scrape to the next:
// each concern's probes of its NVML calls, and what it carries between readings. It lives
// as long as the device does (a MIG instance's as long as its UUID); the probes start again
// from what the library exports when the device asks for it (a MIG mode change, a lost GPU
// back: nvmlx.Device.ProbeEpoch), the rest is kept.
type deviceState struct {
	epoch uint64

	memory      memoryState
	processes   processesState
	utilization utilizationState
	processUtil processUtilState
	modes       modesState
	retired     retiredPagesState
	remapped    remappedRowsState
	ecc         eccState
}

// probe starts every concern's probes again from what the device's library exports.
func (st *deviceState) probe(d *nvmlx.Device) {
	st.epoch = d.ProbeEpoch()
	st.memory.probe(d)
	st.processes.probe()
	st.utilization.probe(d)
	st.processUtil.probe(d)
	st.modes.probe(d)
	st.retired.probe(d)
	st.remapped.probe(d)
	st.ecc.probe(d)
}

// deviceStates is the scraper's deviceState per device. Only the scrape goroutine uses it.
type deviceStates struct {
	byDevice map[*nvmlx.Device]*deviceState
	listed   map[*nvmlx.Device]struct{} // scratch for retain
}

// of is the device's state, made on first use, its probes started again when due.
func (ds *deviceStates) of(d *nvmlx.Device) *deviceState {
	if ds.byDevice == nil {
		ds.byDevice = map[*nvmlx.Device]*deviceState{}
	}
	st := ds.byDevice[d]
	if st == nil {
		st = &deviceState{}
		st.probe(d)
		ds.byDevice[d] = st
	} else if st.epoch != d.ProbeEpoch() {
		st.probe(d)
	}
	return st
}

// retain forgets the state of every device the session no longer lists (a GPU replaced or
// gone, a MIG instance destroyed): such a device never comes back as the same *Device.
func (ds *deviceStates) retain(devices []*nvmlx.Device) {
	if len(ds.byDevice) == 0 {
		return
	}
	if ds.listed == nil {
		ds.listed = map[*nvmlx.Device]struct{}{}
	}
	clear(ds.listed)
	for _, d := range devices {
		ds.listed[d] = struct{}{}
		for _, inst := range d.MIGInstances() {
			ds.listed[inst] = struct{}{}
		}
	}
	for d := range ds.byDevice {
		if _, ok := ds.listed[d]; !ok {
			delete(ds.byDevice, d)
		}
	}
}

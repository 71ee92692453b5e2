package gpumemreceiver

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"
)

// A library without the calls of newer branches (R470: no memory info v2) never has them
// called: calling a missing symbol kills the process. The metrics that remain are emitted.
func TestMissingSymbolsAreNeverCalled(t *testing.T) {
	g := newMIGGPU()
	lib := newFakeNVML(g)
	lib.missing = map[string]bool{"nvmlDeviceGetMemoryInfo_v2": true, "nvmlDeviceGetRemappedRows": true, "nvmlDeviceGetMigMode": true, "nvmlDeviceGetSerial": true}
	o := startObserved(t, lib)
	var got map[string]map[string][]point
	for range nvmlx.MIGRecheckEvery + 1 {
		var err error
		got, err = o.scrape(t)
		require.NoError(t, err)
	}
	dev := lib.devices[0]
	assert.Empty(t, dev.GetMemoryInfo_v2Calls())
	assert.Empty(t, dev.GetRemappedRowsCalls())
	assert.Empty(t, dev.GetMigModeCalls())
	assert.Empty(t, dev.GetSerialCalls())
	require.Len(t, got, 1, "without the MIG calls the GPU is one resource")
	gpu := got[g.uuid]
	assert.Equal(t, float64(g.total-(g.total-g.reserved-g.used)), gpu["hw.gpu.memory.usage"][0].value, "v1: total - free")
	assert.NotContains(t, gpu, "nvidia.gpu.memory.reserved")
	assert.NotContains(t, gpu, "nvidia.gpu.memory.remapped_rows")
	assert.Contains(t, gpu, "hw.errors", "the calls the library has still report")
	infos := o.logs.FilterMessage("the NVIDIA driver's NVML library lacks calls of newer driver branches; the metrics they feed are not emitted").All()
	require.Len(t, infos, 1)
	assert.Equal(t, []any{"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetRemappedRows", "nvmlDeviceGetMigMode", "nvmlDeviceGetSerial"}, infos[0].ContextMap()["missing_symbols"])
}

// NOT_SUPPORTED answered in MIG mode (row remapping with instances) is probed again once the
// GPU leaves MIG mode.
func TestMIGModeChangeReprobesNotSupported(t *testing.T) {
	g := newMIGGPU()
	lib := newFakeNVML(g)
	lib.devices[0].GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
		if g.mig.enabled {
			return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED
		}
		return 4, 1, false, false, nvml.SUCCESS
	}
	o := startObserved(t, lib)
	got, err := o.scrape(t)
	require.NoError(t, err)
	assert.NotContains(t, got[g.uuid], "nvidia.gpu.memory.remapped_rows")

	g.mig.enabled = false
	for i := 0; i <= nvmlx.MIGRecheckEvery && len(got[g.uuid]["nvidia.gpu.memory.remapped_rows"]) == 0; i++ {
		got, err = o.scrape(t)
		require.NoError(t, err)
	}
	require.Len(t, got[g.uuid]["nvidia.gpu.memory.remapped_rows"], 2, "probed again after MIG mode was left")
	assert.Equal(t, 4.0, got[g.uuid]["nvidia.gpu.memory.remapped_rows"][0].value)
}

// A kernel Xid line naming a MIG instance ("GPU-I:07") goes to that instance's resource when
// it is known, else to the parent GPU.
func TestXidAttributedToMIGInstance(t *testing.T) {
	g := newMIGGPU()
	o := startObserved(t, newFakeNVML(g))
	_, err := o.scrape(t)
	require.NoError(t, err)
	var bus string
	require.NoError(t, o.r.sess.WithDevices(func(_ string, ds []*nvmlx.Device) { bus = ds[0].BusID }))

	events := []xidsource.Event{
		{Code: 94, BusID: bus, Kmsg: true, MIGNamed: true, GI: 7, CI: -1},
		{Code: 94, BusID: bus, Kmsg: true, MIGNamed: true, GI: 1, CI: 0},
		{Code: 94, BusID: bus, Kmsg: true, MIGNamed: true, GI: 12, CI: -1},
		{Code: 31, BusID: bus, Kmsg: true},
	}
	o.r.xids.ResolveDevices(events)
	want := []string{"MIG-2222", "MIG-1111", g.uuid, g.uuid}
	for i, e := range events {
		if assert.NotNil(t, e.Dev, i) {
			assert.Equal(t, want[i], e.Dev.UUID, i)
		}
	}
	o.r.emitXids(events)
	got, err := o.scrape(t)
	require.NoError(t, err)
	require.Len(t, got["MIG-2222"]["nvidia.gpu.xid.errors"], 1)
	assert.Equal(t, int64(94), got["MIG-2222"]["nvidia.gpu.xid.errors"][0].attrs["nvidia.gpu.xid"])
	assert.Len(t, got[g.uuid]["nvidia.gpu.xid.errors"], 2, "Xid 94 of an unknown instance and Xid 31 on the GPU")
}

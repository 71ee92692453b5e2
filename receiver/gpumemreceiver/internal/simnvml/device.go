package simnvml

import (
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// noInstance is what NVML puts in GPU/compute instance ids outside MIG.
const noInstance = 0xFFFFFFFF

// supportedEvents are the event types a simulated GPU accepts; only Xids are
// ever delivered.
const supportedEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError

// H100 SXM5 PCI ids, for PciInfo.
const (
	h100DeviceID    = 0x233010DE
	h100SubsystemID = 0x16C110DE
)

var memoryV2Version = nvml.STRUCT_VERSION(nvml.Memory_v2{}, 2)

// features says which NVML feature groups a GPU answers.
type features struct {
	memoryInfoV2, utilization, retiredPages, remappedRows, ecc, mig, events, serial, vbios bool
	processUtilization, persistenceMode, computeMode                                       bool
}

// device is one simulated GPU. Methods the receiver uses are implemented
// here; the embedded mock answers the rest with ERROR_NOT_SUPPORTED.
type device struct {
	*mock.Device
	sim     *Sim
	gpu     *GPU
	index   int
	pci     pciAddr
	pciInfo nvml.PciInfo
	has     features
	// migs are the scenario's MIG instances, in list order (their MIG device index).
	migs []*migDevice
}

var _ nvml.Device = (*device)(nil)

func newDevice(sim *Sim, g *GPU) (*device, error) {
	addr, err := parseBusID(g.BusID)
	if err != nil {
		return nil, err
	}
	on := func(k string) bool {
		v, ok := g.Supports[k]
		return !ok || v
	}
	d := &device{
		Device: &mock.Device{},
		sim:    sim,
		gpu:    g,
		index:  *g.Index,
		pci:    addr,
		has: features{
			memoryInfoV2: on("memory_info_v2"), utilization: on("utilization"),
			retiredPages: on("retired_pages"), remappedRows: on("remapped_rows"),
			ecc: on("ecc"), mig: on("mig"), events: on("events"), serial: on("serial"), vbios: on("vbios"),
			processUtilization: on("process_utilization"), persistenceMode: on("persistence_mode"), computeMode: on("compute_mode"),
		},
	}
	d.pciInfo = nvml.PciInfo{
		Domain: addr.domain, Bus: addr.bus, Device: addr.device,
		PciDeviceId: h100DeviceID, PciSubSystemId: h100SubsystemID,
	}
	copyCString(d.pciInfo.BusId[:], addr.nvml())
	copyCString(d.pciInfo.BusIdLegacy[:], addr.legacy())
	fillNotSupported(d.Device)
	if g.MIG != nil {
		for i := range g.MIG.Instances {
			d.migs = append(d.migs, newMIGDevice(d, &g.MIG.Instances[i], i))
		}
	}
	return d, nil
}

// copyCString writes s NUL-terminated into a C char array.
func copyCString(dst []int8, s string) {
	n := min(len(s), len(dst)-1)
	for i := 0; i < n; i++ {
		dst[i] = int8(s[i])
	}
	dst[n] = 0
}

// now returns the current scenario time and loop number.
func (d *device) now() (time.Duration, int64) { return d.sim.scenarioTime(d.sim.elapsed()) }

func (d *device) GetUUID() (string, nvml.Return) {
	if !d.sim.up() {
		return "", nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	return d.uuid(t), nvml.SUCCESS
}

func (d *device) GetName() (string, nvml.Return) {
	if !d.sim.up() {
		return "", nvml.ERROR_UNINITIALIZED
	}
	return d.gpu.Name, nvml.SUCCESS
}

func (d *device) GetSerial() (string, nvml.Return) {
	if !d.sim.up() {
		return "", nvml.ERROR_UNINITIALIZED
	}
	if !d.has.serial {
		return "", nvml.ERROR_NOT_SUPPORTED
	}
	return d.gpu.Serial, nvml.SUCCESS
}

func (d *device) GetVbiosVersion() (string, nvml.Return) {
	if !d.sim.up() {
		return "", nvml.ERROR_UNINITIALIZED
	}
	if !d.has.vbios {
		return "", nvml.ERROR_NOT_SUPPORTED
	}
	return d.gpu.VBIOS, nvml.SUCCESS
}

func (d *device) GetPciInfo() (nvml.PciInfo, nvml.Return) {
	if !d.sim.up() {
		return nvml.PciInfo{}, nvml.ERROR_UNINITIALIZED
	}
	return d.pciInfo, nvml.SUCCESS
}

func (d *device) GetIndex() (int, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	return d.index, nvml.SUCCESS
}

func (d *device) GetMinorNumber() (int, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	return *d.gpu.Minor, nvml.SUCCESS
}

func (d *device) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	if !d.sim.up() {
		return nvml.Utilization{}, nvml.ERROR_UNINITIALIZED
	}
	t, _ := d.now()
	// NVML does not report utilization of a GPU in MIG mode.
	if !d.has.utilization || d.migOn(t) {
		return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.Utilization{
		Gpu:    uint32(toUint(d.gpu.Utilization.At(t))),
		Memory: uint32(toUint(d.gpu.MemoryUtilization.At(t))),
	}, nvml.SUCCESS
}

func (d *device) GetSupportedEventTypes() (uint64, nvml.Return) {
	if !d.sim.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	if !d.has.events {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return supportedEvents, nvml.SUCCESS
}

// RegisterEvents adds this device to set, as nvmlDeviceRegisterEvents does;
// asking for a type the device does not support is NOT_SUPPORTED.
func (d *device) RegisterEvents(types uint64, set nvml.EventSet) nvml.Return {
	if !d.sim.up() {
		return nvml.ERROR_UNINITIALIZED
	}
	if !d.has.events || types&^uint64(supportedEvents) != 0 {
		return nvml.ERROR_NOT_SUPPORTED
	}
	es, ok := set.(*eventSet)
	if !ok || es.sim != d.sim {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return es.register(d.index, types)
}

// toUint rounds a series value to an unsigned integer.
func toUint(v float64) uint64 {
	if v <= 0 || math.IsNaN(v) {
		return 0
	}
	if v >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(v))
}

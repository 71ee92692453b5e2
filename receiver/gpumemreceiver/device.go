package gpumemreceiver

import (
	"fmt"
	"sync/atomic"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// device is one GPU as discovered at init, or one MIG instance of a GPU in MIG mode: its
// handle, the facts that do not change while the driver is loaded (or the instance lives),
// and what it was found to support.
type device struct {
	handle nvml.Device
	index  int
	uuid   string
	name   string // the product name NVML gives (hw.model)
	serial string
	// firmware is the VBIOS version; "" where NVML does not give it.
	firmware string
	busID    string

	memoryV2, utilization, compute, graphics                       support
	retiredPages, retiredPending, remappedRows, eccMode, eccErrors support
	// per-process utilization, persistence and compute mode (processutil.go, modes.go)
	processUtil, persistence, computeMode support
	processUtilSeen                       uint64 // NVML's timestamp (µs) of the newest sample read

	// syms is what the loaded library exports (shared by every device of a session).
	syms *driverSymbols
	// lost is set when the GPU answers GPU_IS_LOST or reports Xid 79: the scraper stops
	// calling it and reports hw.status failed until a re-enumeration finds it answering.
	// Set by the scraper and the Xid source, cleared by the session's re-enumeration.
	lost atomic.Bool
	// pending is set by the reliability recorders: a page retirement or a row remapping
	// waits for a reset (hw.status degraded).
	retirementPending, remapPending bool

	// eccStart is the start time of the volatile ECC counters: the first scrape, moved on
	// when a counter goes down (the driver was reloaded and the counters reset).
	eccStart pcommon.Timestamp
	eccLast  [2]uint64
	xid      xidCounter

	// mig is a GPU's MIG mode and instances (see mig.go).
	mig migState
	// On a MIG instance: the GPU it is carved from and which slice it is. index, serial and
	// busID are the parent's.
	parent                           *device
	gpuInstanceID, computeInstanceID int64
	profile                          string
}

// support remembers whether an NVML call works on a device, so NOT_SUPPORTED is probed once
// and the call is never made again.
type support uint8

const (
	supportUnknown support = iota
	supported
	unsupported
)

// check records r and says whether the call's result can be used. NOT_SUPPORTED (and a call
// the installed driver lacks) marks the call unsupported quietly; other failures are errors.
func (s *support) check(r nvml.Return) (ok bool, err error) {
	switch r {
	case nvml.SUCCESS:
		*s = supported
		return true, nil
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		*s = unsupported
		return false, nil
	default:
		return false, r
	}
}

// resetProbes forgets what was probed, so every call is probed again (after a MIG mode
// change, or when a lost GPU comes back); calls whose symbols the library lacks stay off.
func (d *device) resetProbes() {
	d.memoryV2 = d.syms.initial(symMemoryInfoV2)
	d.utilization = d.syms.initial(symUtilizationRates)
	d.compute, d.graphics = supportUnknown, supportUnknown
	d.retiredPages = d.syms.initial(symRetiredPages)
	d.retiredPending = d.syms.initial(symRetiredPagesPending)
	d.remappedRows = d.syms.initial(symRemappedRows)
	d.eccMode = d.syms.initial(symEccMode)
	d.eccErrors = d.syms.initial(symTotalEccErrors)
	d.processUtil = d.syms.initial(symProcessUtilization)
	d.persistence = d.syms.initial(symPersistenceMode)
	d.computeMode = d.syms.initial(symComputeMode)
	d.retirementPending, d.remapPending = false, false
}

// root is the physical GPU: the device itself, or a MIG instance's parent.
func (d *device) root() *device {
	if d.parent != nil {
		return d.parent
	}
	return d
}

// discover lists the GPUs. A GPU whose handle cannot be had (lost, or not permitted) is left
// out with a warning rather than failing the whole receiver.
func discover(lib nvml.Interface, syms *driverSymbols, logger *zap.Logger) ([]*device, string, error) {
	var driver string
	if syms.has(symSystemDriverVersion) {
		v, r := lib.SystemGetDriverVersion()
		if r == nvml.SUCCESS {
			driver = v
		} else {
			logger.Debug("driver version not available", zap.Error(r))
		}
	}
	count, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return nil, "", fmt.Errorf("count GPUs: %w", r)
	}
	devices := make([]*device, 0, count)
	for i := 0; i < count; i++ {
		d, err := openDevice(lib, syms, i)
		if isLost(err) {
			// Without a handle there is no UUID to report hw.status under; re-enumeration
			// adds the GPU once it answers.
			logger.Warn("GPU lost: NVML can no longer reach it; it is left out until it answers again",
				zap.Int("index", i), zap.String("action", lostAction), zap.Error(err))
			continue
		}
		if err != nil {
			logger.Warn("GPU left out", zap.Int("index", i), zap.Error(err))
			continue
		}
		devices = append(devices, d)
	}
	return devices, driver, nil
}

// openDevice gets the handle of the GPU at index and reads what does not change.
func openDevice(lib nvml.Interface, syms *driverSymbols, i int) (*device, error) {
	h, r := lib.DeviceGetHandleByIndex(i)
	if r != nvml.SUCCESS {
		return nil, fmt.Errorf("get handle of GPU %d: %w", i, r)
	}
	d := &device{handle: h, index: i, syms: syms}
	if d.uuid, r = h.GetUUID(); r != nvml.SUCCESS {
		return nil, fmt.Errorf("read UUID of GPU %d: %w", i, r)
	}
	d.name, _ = h.GetName()
	if syms.has(symDeviceGetSerial) {
		if serial, r := h.GetSerial(); r == nvml.SUCCESS {
			d.serial = serial
		}
	}
	if syms.has(symVbiosVersion) {
		if vbios, r := h.GetVbiosVersion(); r == nvml.SUCCESS {
			d.firmware = vbios
		}
	}
	if pci, r := h.GetPciInfo(); r == nvml.SUCCESS {
		d.busID = busIDString(pci.BusId)
		// The kernel prints bus ids its own way; one form lets Xid lines find their GPU.
		if norm := xid.NormalizeBusID(d.busID); norm != "" {
			d.busID = norm
		}
	}
	d.resetProbes()
	d.mig.mode = syms.initial(migSymbols...)
	return d, nil
}

// busIDString turns NVML's NUL-terminated C string into Go's.
func busIDString(b [32]int8) string {
	buf := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		buf = append(buf, byte(c))
	}
	return string(buf)
}

// describe fills the GPU's (or MIG instance's) resource attributes.
func (d *device) describe(res metadata.Resource, driverVersion string) {
	res.SetStr(metadata.ResHwID, d.uuid)
	res.SetStr(metadata.ResHwType, metadata.AttrHwTypeGpu)
	res.SetStr(metadata.ResHwVendor, metadata.ResHwVendorNvidia)
	res.SetStr(metadata.ResHwName, d.shortName())
	res.SetStr(metadata.ResHwModel, d.name)
	res.SetStr(metadata.ResHwDriverVersion, driverVersion)
	firmware := d.firmware
	if d.parent != nil {
		firmware = d.parent.firmware // a board property: NVML answers it for the GPU
	}
	res.SetStr(metadata.ResHwFirmwareVersion, firmware)
	res.SetStr(metadata.ResHwSerialNumber, d.serial)
	res.SetInt(metadata.ResNvidiaGpuIndex, int64(d.index))
	res.SetStr(metadata.ResNvidiaGpuPciBusID, d.busID)
	if d.parent != nil {
		res.SetStr(metadata.ResHwParent, d.parent.uuid)
		res.SetInt(metadata.ResNvidiaGpuMigGpuInstanceID, d.gpuInstanceID)
		res.SetInt(metadata.ResNvidiaGpuMigComputeInstanceID, d.computeInstanceID)
		res.SetStr(metadata.ResNvidiaGpuMigProfile, d.profile)
	}
}

// shortName is hw.name: semconv asks for an easily recognised name, and "GPU 3" is how
// nvidia-smi and NVIDIA's tools number the boards (NVML index). A MIG instance adds its GPU
// and compute instance ids, the pair MIG device addressing uses (nvidia-smi mig -lci).
func (d *device) shortName() string {
	if d.parent != nil {
		return fmt.Sprintf("GPU %d MIG %d/%d", d.index, d.gpuInstanceID, d.computeInstanceID)
	}
	return fmt.Sprintf("GPU %d", d.index)
}

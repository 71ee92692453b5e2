package gpumemreceiver

import (
	"fmt"

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
	name   string
	serial string
	busID  string

	memoryV2, utilization, compute, graphics                       support
	retiredPages, retiredPending, remappedRows, eccMode, eccErrors support
	// per-process utilization, persistence and compute mode (processutil.go, modes.go)
	processUtil, persistence, computeMode support
	processUtilSeen                       uint64 // NVML's timestamp (µs) of the newest sample read

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

// discover lists the GPUs. A GPU whose handle cannot be had (lost, or not permitted) is left
// out with a warning rather than failing the whole receiver.
func discover(lib nvml.Interface, logger *zap.Logger) ([]*device, string, error) {
	driver, r := lib.SystemGetDriverVersion()
	if r != nvml.SUCCESS {
		driver = ""
		logger.Debug("driver version not available", zap.Error(r))
	}
	count, r := lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		return nil, "", fmt.Errorf("count GPUs: %w", r)
	}
	devices := make([]*device, 0, count)
	for i := 0; i < count; i++ {
		h, r := lib.DeviceGetHandleByIndex(i)
		if r != nvml.SUCCESS {
			logger.Warn("GPU left out: no handle", zap.Int("index", i), zap.Error(r))
			continue
		}
		d := &device{handle: h, index: i}
		if d.uuid, r = h.GetUUID(); r != nvml.SUCCESS {
			logger.Warn("GPU left out: no UUID", zap.Int("index", i), zap.Error(r))
			continue
		}
		d.name, _ = h.GetName()
		if serial, r := h.GetSerial(); r == nvml.SUCCESS {
			d.serial = serial
		}
		if pci, r := h.GetPciInfo(); r == nvml.SUCCESS {
			d.busID = busIDString(pci.BusId)
			// The kernel prints bus ids its own way; one form lets Xid lines find their GPU.
			if norm := xid.NormalizeBusID(d.busID); norm != "" {
				d.busID = norm
			}
		}
		devices = append(devices, d)
	}
	return devices, driver, nil
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
	res.SetStr(metadata.ResHwName, d.name)
	res.SetStr(metadata.ResHwDriverVersion, driverVersion)
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

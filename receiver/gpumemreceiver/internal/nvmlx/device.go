package nvmlx

import (
	"fmt"
	"sync/atomic"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
)

// Device is one GPU as discovered at init, or one MIG instance of a GPU in MIG mode: its
// handle and the facts that do not change while the driver is loaded (or the instance
// lives). What each call was found to support is the scrape concerns' (ProbeEpoch, Initial). A GPU's Handle, Index and BusID change (a GPU back after
// a reset) only under the session's write lock; a MIG instance's Handle only in RefreshMIG,
// which the scraper calls.
type Device struct {
	Handle nvml.Device
	Index  int
	UUID   string
	Name   string // the product name NVML gives (hw.model)
	Serial string
	// Firmware is the VBIOS version; "" where NVML does not give it.
	Firmware string
	BusID    string
	// Minor is the GPU's minor number (/dev/nvidia<minor>), which GKE's device plugin and
	// NVIDIA's DRA driver name devices by; -1 where NVML does not give it. A MIG
	// instance's is its parent's.
	Minor int

	// Xids counts the device's Xid events by code.
	Xids XidCounts

	// probeEpoch counts the times what each call supports was to be probed again (a MIG
	// mode change, a lost GPU back): the scrape concerns keep their own probes per device
	// and start them again from Initial when it moves (ProbeEpoch).
	probeEpoch atomic.Uint64
	// syms is what the loaded library exports (shared by every device of a session).
	syms *driverSymbols
	// lost is set when the GPU answers GPU_IS_LOST or reports Xid 79: the scraper stops
	// calling it and reports hw.status failed until a re-enumeration finds it answering.
	// Set by the scraper and the Xid source, cleared by the session's re-enumeration.
	lost atomic.Bool

	// mig is a GPU's MIG mode and instances (see mig.go).
	mig migState
	// On a MIG instance: the GPU it is carved from and which slice it is. Index, Serial and
	// BusID are the parent's.
	Parent                           *Device
	GPUInstanceID, ComputeInstanceID int64
	Profile                          string
	// GIProfileID and PlacementStart are the instance's GPU instance profile id and
	// placement start (nvmlGpuInstanceGetInfo), which NVIDIA's DRA driver names MIG devices
	// by; -1 where NVML does not answer (the call needs a privileged user).
	GIProfileID, PlacementStart int
}

// Support remembers whether an NVML call works on a device, so NOT_SUPPORTED is probed once
// and the call is never made again.
type Support uint8

// A call's support: not yet probed, works, or never made again.
const (
	SupportUnknown Support = iota
	Supported
	Unsupported
)

// Check records r and says whether the call's result can be used. NOT_SUPPORTED (and a call
// the installed driver lacks) marks the call unsupported quietly; other failures are errors.
func (s *Support) Check(r nvml.Return) (ok bool, err error) {
	switch r {
	case nvml.SUCCESS:
		*s = Supported
		return true, nil
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		*s = Unsupported
		return false, nil
	default:
		return false, r
	}
}

// resetProbes makes every call be probed again (after a MIG mode change, or when a lost GPU
// comes back): the concerns' probes start again from Initial, so calls whose symbols the
// library lacks stay off.
func (d *Device) resetProbes() { d.probeEpoch.Add(1) }

// ProbeEpoch moves each time every call of the device is to be probed again; a concern's
// per-device probes made under another epoch start again from Initial.
func (d *Device) ProbeEpoch() uint64 { return d.probeEpoch.Load() }

// Initial is the support state of an NVML call (named by its symbols, the Call constants)
// before it is probed: unknown, or unsupported when the loaded library lacks a symbol.
func (d *Device) Initial(calls ...string) Support { return d.syms.initial(calls...) }

// HasEventCalls says whether the loaded library exports the calls that register a device for
// NVML events.
func (d *Device) HasEventCalls() bool {
	return d.syms.has(symSupportedEventTypes, symDeviceRegisterEvents)
}

// root is the physical GPU: the device itself, or a MIG instance's parent.
func (d *Device) root() *Device {
	if d.Parent != nil {
		return d.Parent
	}
	return d
}

// discover lists the GPUs. A GPU whose handle cannot be had (lost, or not permitted) is left
// out with a warning rather than failing the whole receiver.
func discover(lib nvml.Interface, syms *driverSymbols, logger *zap.Logger) ([]*Device, string, error) {
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
	devices := make([]*Device, 0, count)
	for i := 0; i < count; i++ {
		d, err := openDevice(lib, syms, i)
		if IsLost(err) {
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
func openDevice(lib nvml.Interface, syms *driverSymbols, i int) (*Device, error) {
	h, r := lib.DeviceGetHandleByIndex(i)
	if r != nvml.SUCCESS {
		return nil, fmt.Errorf("get handle of GPU %d: %w", i, r)
	}
	d := &Device{Handle: h, Index: i, Minor: -1, syms: syms}
	if d.UUID, r = h.GetUUID(); r != nvml.SUCCESS {
		return nil, fmt.Errorf("read UUID of GPU %d: %w", i, r)
	}
	if syms.has(symMinorNumber) {
		if minor, r := h.GetMinorNumber(); r == nvml.SUCCESS && minor >= 0 {
			d.Minor = minor
		}
	}
	d.Name, _ = h.GetName()
	if syms.has(symDeviceGetSerial) {
		if serial, r := h.GetSerial(); r == nvml.SUCCESS {
			d.Serial = serial
		}
	}
	if syms.has(symVbiosVersion) {
		if vbios, r := h.GetVbiosVersion(); r == nvml.SUCCESS {
			d.Firmware = vbios
		}
	}
	if pci, r := h.GetPciInfo(); r == nvml.SUCCESS {
		d.BusID = busIDString(pci.BusId)
		// The kernel prints bus ids its own way; one form lets Xid lines find their GPU.
		if norm := xid.NormalizeBusID(d.BusID); norm != "" {
			d.BusID = norm
		}
	}
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

package nvmlx

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// The oldest driver branch the receiver supports is R450 (the first with A100, MIG and row
// remapping). go-nvml resolves only a few versioned symbols itself (init, PCI info, device
// count and handles, the process lists, the event wait); every other call is a direct cgo
// call the loader binds on first use, so calling a symbol the installed library lacks is a
// fatal "symbol lookup error" (exit 127), never an error code. So after Init every symbol
// that a driver at or above the floor may lack is looked up, and a missing one makes its
// call unsupported on every device, as NOT_SUPPORTED would. The README's driver table lists
// the same symbols.
const (
	symMemoryInfoV2         = "nvmlDeviceGetMemoryInfo_v2" // R510
	symRemappedRows         = "nvmlDeviceGetRemappedRows"  // R450 (A100 launch)
	symMigMode              = "nvmlDeviceGetMigMode"       // R450; the MIG calls below with it
	symMaxMigDeviceCount    = "nvmlDeviceGetMaxMigDeviceCount"
	symMigDeviceHandle      = "nvmlDeviceGetMigDeviceHandleByIndex"
	symGpuInstanceID        = "nvmlDeviceGetGpuInstanceId"
	symComputeInstanceID    = "nvmlDeviceGetComputeInstanceId"
	symProcessUtilization   = "nvmlDeviceGetProcessUtilization"
	symRetiredPagesPending  = "nvmlDeviceGetRetiredPagesPendingStatus"
	symRetiredPages         = "nvmlDeviceGetRetiredPages"
	symTotalEccErrors       = "nvmlDeviceGetTotalEccErrors"
	symEccMode              = "nvmlDeviceGetEccMode"
	symUtilizationRates     = "nvmlDeviceGetUtilizationRates"
	symSupportedEventTypes  = "nvmlDeviceGetSupportedEventTypes"
	symPersistenceMode      = "nvmlDeviceGetPersistenceMode"
	symComputeMode          = "nvmlDeviceGetComputeMode"
	symDeviceGetSerial      = "nvmlDeviceGetSerial"
	symVbiosVersion         = "nvmlDeviceGetVbiosVersion"
	symSystemDriverVersion  = "nvmlSystemGetDriverVersion"
	symDeviceRegisterEvents = "nvmlDeviceRegisterEvents"
	symMinorNumber          = "nvmlDeviceGetMinorNumber"
	symGpuInstanceByID      = "nvmlDeviceGetGpuInstanceById" // R450, with MIG
	symGpuInstanceInfo      = "nvmlGpuInstanceGetInfo"
)

// probedSymbols are looked up after every Init. Older calls are probed too: a lookup costs a
// dlsym, and a stripped-down or vendor library then costs metrics instead of the process.
var probedSymbols = []string{
	symMemoryInfoV2, symRemappedRows,
	symMigMode, symMaxMigDeviceCount, symMigDeviceHandle, symGpuInstanceID, symComputeInstanceID,
	symProcessUtilization, symRetiredPages, symRetiredPagesPending, symTotalEccErrors, symEccMode,
	symUtilizationRates, symSupportedEventTypes, symDeviceRegisterEvents, symPersistenceMode,
	symComputeMode, symDeviceGetSerial, symVbiosVersion, symSystemDriverVersion,
	symMinorNumber, symGpuInstanceByID, symGpuInstanceInfo,
}

// migSymbols are the calls MIG discovery needs; without any of them MIG is not looked at.
var migSymbols = []string{symMigMode, symMaxMigDeviceCount, symMigDeviceHandle, symGpuInstanceID, symComputeInstanceID}

// driverSymbols says which probed symbols the loaded library lacks. The zero value (and a
// library that cannot tell, such as go-nvml's mock behind the simulated backend) has all.
type driverSymbols struct {
	missing map[string]bool
}

// probeSymbols looks up probedSymbols in the library Init just loaded.
func probeSymbols(lib nvml.Interface) driverSymbols {
	ext := lib.Extensions()
	if ext == nil {
		return driverSymbols{}
	}
	var s driverSymbols
	for _, name := range probedSymbols {
		if ext.LookupSymbol(name) != nil {
			if s.missing == nil {
				s.missing = map[string]bool{}
			}
			s.missing[name] = true
		}
	}
	return s
}

// has says whether the library exports every one of the symbols.
func (s *driverSymbols) has(names ...string) bool {
	if s == nil {
		return true
	}
	for _, n := range names {
		if s.missing[n] {
			return false
		}
	}
	return true
}

// initial is the support state a call starts in: unknown (probe it), or unsupported when
// the library lacks one of its symbols.
func (s *driverSymbols) initial(names ...string) Support {
	if s.has(names...) {
		return SupportUnknown
	}
	return Unsupported
}

// missingList names the missing symbols in probe order, for the log line.
func (s *driverSymbols) missingList() []string {
	var out []string
	for _, n := range probedSymbols {
		if s.missing[n] {
			out = append(out, n)
		}
	}
	return out
}

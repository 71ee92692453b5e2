package nvmlx

import (
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/dl"
)

// go-nvml's Init dlopens the library, resolves a few versioned names with dlsym, and then
// calls nvmlInit_v2 (or nvmlInit) through cgo; every later call, nvmlErrorString included
// (which any Return's Error calls once a library is loaded), is bound by the loader on first
// use. A library that lacks one of them — libz or libc named by mistake, the CUDA toolkit's
// stub, a vendor library with half the API — kills the process on that call with "symbol
// lookup error" (exit 127): there is no error code to catch. So before the first Init the
// library is opened on its own and the calls the receiver makes on every accepted library
// are looked up; it is never called into unless all resolve.

// requiredSymbols are those calls, each with the names go-nvml binds it under (the newest
// version it finds, else the unversioned one). The calls a driver at the receiver's floor
// may lack are probed after Init instead (symbols.go) and only cost their metrics.
var requiredSymbols = [][]string{
	{"nvmlInit_v2", "nvmlInit"},
	{"nvmlShutdown"},
	{"nvmlErrorString"},
	{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
	{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
	{"nvmlDeviceGetUUID"},
	{"nvmlDeviceGetName"},
	{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
	{"nvmlDeviceGetMemoryInfo"},
	{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses"},
	{"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses"},
	{"nvmlEventSetCreate"},
	{"nvmlEventSetWait_v2", "nvmlEventSetWait"},
	{"nvmlEventSetFree"},
}

// NotNVMLError says the library loads but is not the NVIDIA driver's NVML library: it lacks
// calls the receiver makes unconditionally. Missing names each call by its newest name.
type NotNVMLError struct {
	Path    string
	Missing []string
}

func (e *NotNVMLError) Error() string {
	return fmt.Sprintf("%s is not the NVIDIA driver's NVML library: it lacks %s; the receiver does not call into it",
		e.Path, strings.Join(e.Missing, ", "))
}

// CheckLibrary opens the library at path (a file, or a name the loader looks up as go-nvml
// would), looks up requiredSymbols and closes it again, without calling any of them. The
// library is opened RTLD_LOCAL, so what it exports is not seen by the process's other
// lookups. It answers a *NotNVMLError when a call is missing, an error naming the path
// when the loader cannot open it.
func CheckLibrary(path string) error {
	lib := dl.New(path, dl.RTLD_LAZY|dl.RTLD_LOCAL)
	if err := lib.Open(); err != nil {
		return fmt.Errorf("open NVML library %s: %w", path, err)
	}
	defer func() { _ = lib.Close() }()
	var missing []string
	for _, names := range requiredSymbols {
		found := false
		for _, n := range names {
			if lib.Lookup(n) == nil {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, names[0])
		}
	}
	if len(missing) > 0 {
		return &NotNVMLError{Path: path, Missing: missing}
	}
	return nil
}

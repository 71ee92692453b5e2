package parse

import "strings"

// Pinned (page-locked) host memory is allocated through the GPU's API but is
// the host's RAM: cudaMallocHost/cudaHostAlloc (CUDA runtime),
// cuMemHostAlloc/cuMemAllocHost (driver), cudaHostRegister, their HIP
// twins, TensorFlow/XLA's device_host_allocator ("could not allocate pinned
// host memory of size: N", stream executor's "failed to alloc N bytes on
// host"), ggml's ggml_cuda_host_malloc and its CUDA_Host buffers, OpenCV's
// cuda::HostMem (cuda_host_mem.cpp). A failure there carries the GPU API's
// out-of-memory status (cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY)
// though no device memory ran out. parsePinnedHost reports it with device
// kind host (DeviceHost): never an NVIDIA GPU's, never matched to one.

// pinnedMarkers name a page-locked host allocation.
var pinnedMarkers = [...]string{
	"cudaMallocHost", "cudaHostAlloc", "cuMemHostAlloc", "cuMemAllocHost", "cudaHostRegister", "cuMemHostRegister",
	"hipHostMalloc", "hipHostAlloc", "hipMallocHost", "hipHostRegister",
	"pinned host memory", "of pinned memory", "page-locked", "bytes on host", "host_malloc", "cuda_host_mem", "_Host buffer",
}

// hostFailures are the failure statuses a pinned allocation reports.
var hostFailures = [...]string{"out of memory", "OUT_OF_MEMORY", "ErrorMemoryAllocation", "failed to allocate", "could not allocate", "failed to alloc ", "OutOfMemory"}

// parsePinnedHost recognises a failed pinned host allocation: every line of
// the window that states a failure names a pinned allocation (a device OOM
// logged beside a pinned-memory warning is the device's, read by the
// recognisers after this one).
func parsePinnedHost(text string) (Result, bool) {
	w := window(text, 0)
	// Every marker holds one of these: most texts are turned down in four
	// searches rather than one per marker.
	if !containsAny(w, "Host", "host", "pinned", "page-locked") || !containsAny(w, pinnedMarkers[:]...) {
		return absent, false
	}
	found := false
	for start := 0; start < len(w); {
		end := strings.IndexByte(w[start:], '\n')
		if end < 0 {
			end = len(w)
		} else {
			end += start
		}
		line := w[start:end]
		if containsAny(line, hostFailures[:]...) {
			if !containsAny(line, pinnedMarkers[:]...) {
				return absent, false
			}
			found = true
		}
		start = end + 1
	}
	if !found {
		return absent, false
	}
	r := newResult(frameworkFromContext(w))
	r.DeviceKind = DeviceHost
	r.RequestedBytes = pinnedRequest(w)
	return r, true
}

// pinnedRequest reads the size of the failed pinned allocation where the
// message states it: TensorFlow's "pinned host memory of size: N" and
// "failed to alloc N bytes on host" (bytes), ggml's "failed to allocate X
// MiB of pinned memory" and "CUDA_Host buffer of size N" (bytes); -1 when
// none.
func pinnedRequest(w string) int64 {
	for _, label := range [...]string{"pinned host memory of size: ", "failed to alloc ", "_Host buffer of size "} {
		if i := strings.Index(w, label); i >= 0 {
			if v, e, ok := intAt(w, i+len(label)); ok && (label != "failed to alloc " || strings.HasPrefix(w[e:], " bytes on host")) {
				return v
			}
		}
	}
	if i := strings.Index(w, " of pinned memory"); i >= 0 {
		// "%.2f MiB" under a locale with a decimal comma prints
		// "1900,00 MiB": whether the comma groups or separates the text
		// does not say, so such a size stays absent.
		if !strings.Contains(w[max(0, i-24):i], ",") {
			if v, ok := sizeBefore(w, i); ok {
				return v
			}
		}
	}
	return -1
}

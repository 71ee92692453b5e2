package parse

import "strings"

// statusCodes are library status names that mean a device allocation inside
// the library failed. CUDNN_STATUS_NOT_ENOUGH_WORKSPACE and
// CUBLAS_STATUS_NOT_INITIALIZED are deliberately absent (see the package doc).
var statusCodes = [...]struct{ code, framework string }{
	{"CUBLAS_STATUS_ALLOC_FAILED", FrameworkCuBLAS},
	{"CUBLASLT_STATUS_ALLOC_FAILED", FrameworkCuBLAS},
	{"CUDNN_STATUS_ALLOC_FAILED", FrameworkCuDNN},
	{"CUSOLVER_STATUS_ALLOC_FAILED", FrameworkCUDA},
	{"CUSPARSE_STATUS_ALLOC_FAILED", FrameworkCUDA},
	{"CUFFT_ALLOC_FAILED", FrameworkCUDA},
	{"HIPBLAS_STATUS_ALLOC_FAILED", FrameworkROCm},
	{"miopenStatusAllocFailed", FrameworkROCm},
}

// parseLibraryStatus recognises cuBLAS/cuDNN (and sibling) allocation status codes.
func parseLibraryStatus(text string) (Result, bool) {
	if !strings.Contains(text, "ALLOC_FAILED") && !strings.Contains(text, "AllocFailed") {
		return absent, false
	}
	for _, s := range statusCodes {
		if strings.Contains(text, s.code) {
			return newResult(s.framework), true
		}
	}
	return absent, false
}

// parseNCCL reads NCCL's CUDACHECK failure, "Cuda failure '<cudaGetErrorString>'"
// (newer releases "Cuda failure <code> '<string>'"; RCCL says "HIP failure"),
// when the string is "out of memory". Other NCCL errors ("unhandled system
// error", timeouts) are not allocation failures.
func parseNCCL(text string) (Result, bool) {
	for _, anchor := range [...]string{"Cuda failure ", "HIP failure "} {
		for from := 0; ; {
			i := indexFrom(text, anchor, from)
			if i < 0 {
				break
			}
			from = i + len(anchor)
			w := window(text, from)
			if len(w) > 24 {
				w = w[:24]
			}
			if strings.Contains(w, "'out of memory'") {
				return newResult(FrameworkNCCL), true
			}
		}
	}
	return absent, false
}

// cudaCodes are the runtime/driver spellings of "device allocation failed",
// most specific first.
var cudaCodes = [...]struct{ code, framework string }{
	{"hipErrorOutOfMemory", FrameworkROCm},
	{"HIP error: out of memory", FrameworkROCm},
	{"CUDA_ERROR_OUT_OF_MEMORY", FrameworkCUDA},
	{"cudaErrorMemoryAllocation", FrameworkCUDA},
	{"CUDA error: out of memory", FrameworkCUDA},
	{"CUDA driver error: out of memory", FrameworkCUDA},
}

// parseCUDAGeneric recognises a bare CUDA/HIP out-of-memory error code or
// string, as raised by C10_CUDA_CHECK, the driver API, Numba, PyCUDA and
// others. None of these state sizes. The two camel-case codes are searched
// from their rare capital 'E' and checked backwards.
func parseCUDAGeneric(text string) (Result, bool) {
	for _, c := range cudaCodes {
		var found bool
		switch c.code {
		case "hipErrorOutOfMemory":
			found = precededBy(text, "ErrorOutOfMemory", "hip")
		case "cudaErrorMemoryAllocation":
			found = precededBy(text, "ErrorMemoryAllocation", "cuda")
		default:
			found = strings.Contains(text, c.code)
		}
		if found {
			return newResult(c.framework), true
		}
	}
	return absent, false
}

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
	// cusparse.h: "The resources for the computation, such as GPU global or
	// shared memory, are not sufficient to complete the operation."
	{"CUSPARSE_STATUS_INSUFFICIENT_RESOURCES", FrameworkCUDA},
	{"CUFFT_ALLOC_FAILED", FrameworkCUDA},
	{"HIPBLAS_STATUS_ALLOC_FAILED", FrameworkROCm},
	{"miopenStatusAllocFailed", FrameworkROCm},
}

// parseLibraryStatus recognises cuBLAS/cuDNN (and sibling) allocation status codes.
func parseLibraryStatus(text string) (Result, bool) {
	if cusparseInsufficient(text) {
		return newResult(FrameworkCUDA), true
	}
	if !strings.Contains(text, "ALLOC_FAILED") && !strings.Contains(text, "AllocFailed") && !strings.Contains(text, "INSUFFICIENT_RESOURCES") {
		return absent, false
	}
	for _, s := range statusCodes {
		if strings.Contains(text, s.code) {
			r := newResult(s.framework)
			// CNTK: "CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ;".
			if v, ok := sizeAfterInt(text, "GPU="); ok {
				r.DeviceIndex = v
			}
			return r, true
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
				r := newResult(FrameworkNCCL)
				r.DeviceIndex = ncclDevice(text)
				// alloc.h's ncclCudaCalloc follows with "Failed to CUDA
				// calloc[ async] <n> bytes", n = nelem*sizeof(T), the
				// request; the device is the "[cudaDev]" of NCCL's prefix.
				for _, l := range [...]string{"CUDA calloc async ", "CUDA calloc "} {
					if v, ok := sizeAfter(text, l); ok {
						r.RequestedBytes = v
						break
					}
				}
				return r, true
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
			if isNegative(text) || isTalk(text, firstIndex(text, []string{c.code, "ErrorOutOfMemory", "ErrorMemoryAllocation"})) { // "failed to alloc … bytes on host: CUDA_ERROR_OUT_OF_MEMORY"
				return absent, false
			}
			r := newResult(c.framework)
			// XLA's StreamExecutor init: "… for CUDA device ordinal 0: … cuDevicePrimaryCtxRetain:
			// CUDA_ERROR_OUT_OF_MEMORY: out of memory; total memory reported: <n>".
			// stream_executor cuda_driver.cc CreateContext: on
			// CUDA_ERROR_OUT_OF_MEMORY it appends "; total memory reported: "
			// GetDeviceTotalMemory (cuDeviceTotalMem, bytes) as a uint64. A
			// wrapped value above int64 (18446744073709551615) does not parse
			// and stays absent; the device is then read from "for CUDA device
			// ordinal <d>" (direct_session.cc's "failed initializing
			// StreamExecutor for CUDA device ordinal %d").
			if v, ok := sizeAfter(text, "total memory reported: "); ok {
				r.TotalBytes = v
				r.DeviceIndex = deviceFromText(text)
			} else if d, ok := sizeAfterInt(text, "for CUDA device ordinal "); ok {
				r.DeviceIndex = d
			}
			return r, true
		}
	}
	return absent, false
}

// sizeAfterInt reads a small integer (an ordinal) right after label.
func sizeAfterInt(text, label string) (int, bool) {
	i := strings.Index(text, label)
	if i < 0 {
		return 0, false
	}
	if d := deviceAfter(text, i+len(label)); d >= 0 {
		return d, true
	}
	return 0, false
}

// cusparseInsufficient reports cusparseGetErrorString's text for
// CUSPARSE_STATUS_INSUFFICIENT_RESOURCES, "insufficient resources", as
// PyTorch's TORCH_CUDASPARSE_CHECK raises it (aten/src/ATen/cuda/Exceptions.h:
// "CUDA error: " cusparseGetErrorString(status) " when calling `" expr "`"),
// with the cusparse call named within the line.
func cusparseInsufficient(text string) bool {
	const s = "insufficient resources when calling "
	i := strings.Index(text, s)
	if i < 0 {
		return false
	}
	w := window(text, i+len(s))
	if len(w) > 16 {
		w = w[:16]
	}
	return strings.Contains(w, "cusparse")
}

// checkStatusCodes are glog CHECK_EQ failures on a library call whose
// returned status, printed as a number, is that library's allocation
// failure: "Check failed: (call) == <SUCCESS> (<status> vs. 0)". Only the
// number is printed, so the code's value in the library's header decides.
var checkStatusCodes = [...]struct{ success, framework string }{
	// cufft.h: CUFFT_SUCCESS = 0x0, CUFFT_INVALID_PLAN = 0x1, CUFFT_ALLOC_FAILED = 0x2.
	{"== CUFFT_SUCCESS (2 vs. 0)", FrameworkCUDA},
}

// parseCheckStatus recognises checkStatusCodes.
func parseCheckStatus(text string) (Result, bool) {
	if !strings.Contains(text, " vs. 0)") {
		return absent, false
	}
	for _, c := range checkStatusCodes {
		if strings.Contains(text, c.success) {
			return newResult(c.framework), true
		}
	}
	return absent, false
}

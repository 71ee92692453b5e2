package parse

import "strings"

// xlaFramework names the framework of an XLA runtime message: JAX unless the
// text shows TensorFlow (which links XLA too).
func xlaFramework(text string) string {
	if strings.Contains(text, "tensorflow") {
		return FrameworkTensorFlow
	}
	return FrameworkJAX
}

// parseXLA reads XLA's GPU allocation failures, both RESOURCE_EXHAUSTED:
//
//	Failed to allocate request for <h> (<n>B) on device ordinal <d>   (StreamExecutorMemoryAllocator)
//	Out of memory while trying to allocate <n> bytes.                (TfAllocatorAdapter; some builds print <h>)
//
// xla/stream_executor/device_memory_allocator.cc (formerly under
// tensorflow/stream_executor) StreamExecutorMemoryAllocator::Allocate:
// StrFormat("Failed to allocate request for %s (%uB) on device ordinal %d",
// HumanReadableNumBytes(size), size, device_ordinal): <h> and <n> are the
// same request, <n> exact, so <n> is used; <d> the device ordinal.
func parseXLA(text string) (Result, bool) {
	const req = "Failed to allocate request for "
	if i := strings.Index(text, req); i >= 0 {
		w := window(text, i+len(req))
		if v, p, ok := sizeAt(w, 0); ok {
			r := newResult(xlaFramework(text))
			r.RequestedBytes = v
			if strings.HasPrefix(w[p:], " (") {
				if n, e, ok := intAt(w, p+2); ok && strings.HasPrefix(w[e:], "B)") {
					r.RequestedBytes = n
					p = e + 2
				}
			}
			if strings.HasPrefix(w[p:], " on device ordinal ") {
				r.DeviceIndex = deviceAfter(w, p+len(" on device ordinal "))
			}
			return r, true
		}
	}
	const oom = "Out of memory while trying to allocate "
	if i := strings.Index(text, oom); i >= 0 {
		if v, _, ok := sizeAt(window(text, i+len(oom)), 0); ok {
			r := newResult(xlaFramework(text))
			r.RequestedBytes = v
			return r, true
		}
	}
	return absent, false
}

// parseCuPyLegacy reads CuPy <= 6's "out of memory to allocate <n> bytes
// (total <t> bytes)" (cupy/cuda/memory.pyx: OutOfMemoryError(size, total)
// with total = size + pool.total_bytes()), so the pool held t - n: reserved.
func parseCuPyLegacy(text string) (Result, bool) {
	const anchor, mid = "out of memory to allocate ", " bytes (total "
	i := strings.Index(text, anchor)
	if i < 0 {
		return absent, false
	}
	w := window(text, i+len(anchor))
	n, e, ok := intAt(w, 0)
	if !ok || !strings.HasPrefix(w[e:], mid) {
		return absent, false
	}
	r := newResult(FrameworkCuPy)
	r.RequestedBytes = n
	if t, e2, ok := intAt(w, e+len(mid)); ok && strings.HasPrefix(w[e2:], " bytes)") && t >= n {
		r.ReservedBytes = t - n
	}
	return r, true
}

// parseOutOfMemoryAllocating reads "Out of memory allocating <n> bytes",
// which two libraries print:
//
//	CuPy:  Out of memory allocating {:,} bytes (allocated so far: {:,} bytes[, limit set to: {:,} bytes]).
//	XLA:   RESOURCE_EXHAUSTED: Out of memory allocating <n> bytes.
//
// CuPy's "allocated so far" is the memory pool's total (in use + cached), so
// it is ReservedBytes. Without CuPy's suffix or a JAX/XLA context the words
// are too generic (any host allocator could say them) and are not recognised.
func parseOutOfMemoryAllocating(text string) (Result, bool) {
	const anchor = "Out of memory allocating "
	i := strings.Index(text, anchor)
	if i < 0 {
		return absent, false
	}
	w := window(text, i+len(anchor))
	n, p, ok := groupedIntAt(w, 0)
	if !ok || !strings.HasPrefix(w[p:], " bytes") {
		return absent, false
	}
	p += len(" bytes")
	const soFar, limit = " (allocated so far: ", ", limit set to: "
	switch {
	case strings.HasPrefix(w[p:], soFar) || strings.Contains(text, "cupy"):
		r := newResult(FrameworkCuPy)
		r.RequestedBytes = n
		if strings.HasPrefix(w[p:], soFar) {
			// "allocated so far" is the pool's _total_bytes: the bytes the
			// pool holds on the device, in use and cached, before the
			// request: ReservedBytes. Re-read in cupy/cuda/memory.pyx
			// (the fields of the held-out batch):
			//   - the wording came with PR #2242 (commit 8529b647b33b,
			//     merged as 0e4141428d4d, first in v7.0.0b1), which also
			//     changed the number from size + pool total to total - size;
			//   - v9.0.0 (8de4cf8b0dc1): SingleDeviceMemoryPool._try_malloc
			//     sets total = _total_bytes + size and raises
			//     OutOfMemoryError(size, total - size, limit), both on the
			//     limit check and after cudaMalloc failed; MemoryAsyncPool
			//     passes -1 ("allocated so far: -1 bytes");
			//   - master after v14.0.0rc1 (6b6d9563c4f7): _try_malloc raises
			//     OutOfMemoryError(size, self._total_bytes.load(), limit),
			//     _total_bytes documented as "total bytes actually allocated
			//     on GPU" with free_bytes() = _total_bytes - _in_use_bytes;
			//     MemoryAsyncPool passes total_bytes() (the pool's reserved
			//     memory) when it can read pool statistics, else its
			//     "cdef size_t curr_total=-1", which prints as
			//     18,446,744,073,709,551,615.
			// Neither -1 nor that value parses as a size (decimalBytes
			// refuses more than int64), so both stay absent, and so does
			// the limit after them. (CuPy <= 6 printed "(total T bytes)"
			// with T = size + pool bytes: parseCuPyLegacy.)
			if v, e, ok := groupedIntAt(w, p+len(soFar)); ok && strings.HasPrefix(w[e:], " bytes") {
				r.ReservedBytes = v
				if strings.HasPrefix(w[e:], " bytes"+limit) {
					if l, _, ok := groupedIntAt(w, e+len(" bytes"+limit)); ok {
						r.LimitBytes = l
					}
				}
			}
		}
		return r, true
	case containsAny(text, "RESOURCE_EXHAUSTED", "XlaRuntimeError", "jax", "JAX", "Jax"):
		r := newResult(FrameworkJAX)
		r.RequestedBytes = n
		return r, true
	}
	return absent, false
}

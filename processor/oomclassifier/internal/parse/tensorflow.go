package parse

import "strings"

// tfOrJAX names the framework of a TensorFlow-runtime message: BFC and
// stream-executor lines are printed by shared tsl/xla code that both
// TensorFlow and JAX link, so the surrounding text decides.
func tfOrJAX(text string) string {
	switch {
	case strings.Contains(text, "tensorflow") || strings.Contains(text, "keras"):
		return FrameworkTensorFlow
	case containsAny(text, "jax", "JAX", "Jax", "xla/", "XlaRuntimeError"):
		return FrameworkJAX
	}
	return FrameworkTensorFlow
}

// hostAllocator reports an allocator or device name that is host memory
// (cpu, cuda_host_bfc, gpu_host_bfc): those OOMs are not GPU failures.
func hostAllocator(name string) bool {
	return containsFold(name, "host") || containsFold(name, "cpu")
}

// gpuOrdinal finds "GPU_<d>" / "GPU:<d>" / "gpu:<d>" in name; -1 if none.
func gpuOrdinal(name string) int {
	for _, p := range [...]string{"GPU_", "GPU:", "gpu:", "gpu_", "DML:"} {
		if j := strings.Index(name, p); j >= 0 {
			return deviceAfter(name, j+len(p))
		}
	}
	return -1
}

// parseTFBFC reads the BFC allocator's failure line (tsl bfc_allocator.cc):
//
//	Allocator (<name>) ran out of memory trying to allocate <h> (rounded to <n>)[ from the lower end]requested by op <op>
//
// followed, in a full dump, by "Stats:" with exact "Limit:" and "InUse:" and
// "total_region_allocated_bytes_: <n>". The same words followed by
// " with freed_by_count=" are the retry warning ("the caller indicates that
// this is not a failure"): the device allocation did fail and the caller
// falls back (a slower algorithm, a smaller workspace), so it is recognised
// too; it is often the only trace of memory pressure a job leaves.
func parseTFBFC(text string) (Result, bool) {
	const anchor = ") ran out of memory trying to allocate "
	i := strings.Index(text, anchor)
	if i < 0 {
		return parseTFBFCUnnamed(text)
	}
	lo := max(0, i-128)
	a := strings.LastIndex(text[lo:i], "Allocator (")
	if a < 0 {
		return absent, false
	}
	name := text[lo+a+len("Allocator (") : i]
	if hostAllocator(name) {
		return absent, false
	}
	w := window(text, i+len(anchor))
	v, _, ok := sizeAt(w, emphasis(w, 0))
	if !ok {
		return absent, false
	}
	r := newResult(tfOrJAX(text))
	// The request is num_bytes, printed by HumanReadableNumBytes (two
	// decimals); "(rounded to N)" is RoundedBytes(num_bytes), the chunk size
	// the allocator looked for, up to 255 bytes more than the request. The
	// figure the message gives for the request is the human one.
	r.RequestedBytes = v
	r.DeviceIndex = gpuOrdinal(name)
	rest := text[i:]
	if s := strings.Index(rest, "Stats:"); s >= 0 {
		st := window(rest, s)
		r.LimitBytes = labelInt(st, "Limit:")
		r.AllocatedBytes = labelInt(st, "InUse:")
	}
	if t := strings.Index(rest, "total_region_allocated_bytes_:"); t >= 0 {
		r.ReservedBytes = labelInt(window(rest, t), "total_region_allocated_bytes_:")
	}
	return r, true
}

// parseTFBFCUnnamed reads the BFC allocator's failure line of TF 1.x
// (tensorflow/core/common_runtime/bfc_allocator.cc, e.g. r1.3 AllocateRawInternal):
//
//	Ran out of memory trying to allocate <HumanReadableNumBytes(num_bytes)>.  See logs for memory state.
//
// It names no allocator, so no device; the size is the request. TF 1.x
// ran one BFC allocator per GPU and one for pinned host memory
// (cuda_host_bfc), so the line alone cannot rule out host memory: it is taken
// as a device failure unless the text around it says "host". The pinned
// pool is rarely what runs out; the cited entry (tensorflow-bfc-0013) comes
// with the GPU tensor OOM it caused.
func parseTFBFCUnnamed(text string) (Result, bool) {
	const anchor = "Ran out of memory trying to allocate "
	i := strings.Index(text, anchor)
	if i < 0 {
		return absent, false
	}
	if lo, hi := max(0, i-256), min(len(text), i+len(anchor)+64); containsFold(text[lo:hi], "host") {
		return absent, false
	}
	w := window(text, i+len(anchor))
	v, _, ok := sizeAt(w, emphasis(w, 0))
	if !ok {
		return absent, false
	}
	r := newResult(tfOrJAX(text))
	r.RequestedBytes = v
	return r, true
}

// emphasis skips Markdown emphasis ("**", "__", "`") a paste put around a
// value at s[i:]; the value is read after it.
func emphasis(s string, i int) int {
	for i < len(s) && (s[i] == '*' || s[i] == '_' || s[i] == '`') {
		i++
	}
	return i
}

// labelInt reads "<label><spaces><digits>" in s; -1 when absent.
func labelInt(s, label string) int64 {
	j := strings.Index(s, label)
	if j < 0 {
		return -1
	}
	if v, _, ok := intAt(s, skipSpaces(s, j+len(label))); ok {
		return v
	}
	return -1
}

// dtypeSize is the element size of TensorFlow's DataTypeString names;
// variable-size types (string, resource, variant) are absent.
var dtypeSize = map[string]int64{
	"float": 4, "double": 8, "half": 2, "bfloat16": 2,
	"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
	"bool": 1, "complex64": 8, "complex128": 16,
	"qint8": 1, "quint8": 1, "qint16": 2, "quint16": 2, "qint32": 4,
	"float8_e5m2": 1, "float8_e4m3fn": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "float8_e4m3b11fnuz": 1,
}

// parseTFTensor reads OpKernelContext::allocate_tensor's status:
//
//	OOM when allocating tensor with shape[<dims>] and type <t> on <device> by allocator <name>
//
// (TF1 also "of shape [<dims>]"). The requested bytes are the element count
// times the dtype size: exact for the tensor, before allocator rounding.
// A CPU device or host allocator makes it a host OOM, not recognised (the
// device name is checked for "CPU:" only: "/job:localhost/…" says "host").
func parseTFTensor(text string) (Result, bool) {
	const anchor = "OOM when allocating tensor"
	i := strings.Index(text, anchor)
	if i < 0 {
		return absent, false
	}
	line := window(text, i+len(anchor))
	if nl := strings.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	var device, alloc string
	if j := strings.Index(line, " on "); j >= 0 {
		device = firstField(line[j+len(" on "):])
	}
	if j := strings.Index(line, " by allocator "); j >= 0 {
		alloc = firstField(line[j+len(" by allocator "):])
	}
	if containsFold(device, "cpu:") || hostAllocator(alloc) {
		return absent, false
	}
	r := newResult(tfOrJAX(text))
	if r.DeviceIndex = gpuOrdinal(device); r.DeviceIndex < 0 {
		r.DeviceIndex = gpuOrdinal(alloc)
	}
	if r.DeviceIndex < 0 {
		// TF1 names the device only in the node's attribute on the next line:
		// _device="/job:localhost/replica:0/task:0/device:GPU:0" (or ".../gpu:0").
		r.DeviceIndex = tfNodeDevice(text)
	}
	elems, shapeOK := tensorElements(line)
	if j := strings.Index(line, " and type "); j >= 0 && shapeOK {
		if size, ok := dtypeSize[firstField(line[j+len(" and type "):])]; ok && (elems == 0 || size <= (1<<62)/elems) {
			r.RequestedBytes = elems * size
			r.Derived |= DerivedRequested
		}
	}
	return r, true
}

// tfNodeDevice reads the GPU ordinal of a node's _device attribute; -1 if none.
func tfNodeDevice(text string) int {
	i := strings.Index(text, "_device=")
	if i < 0 {
		return -1
	}
	attr := window(text, i)
	// The value starts after '=' and its opening quote; a text that ends at
	// the '=' (fuzzing found one) has no value.
	const start = len("_device=") + 1
	if len(attr) < start {
		return -1
	}
	if q := strings.IndexAny(attr[start:], "\"]"); q >= 0 {
		attr = attr[:start+q]
	}
	for _, p := range [...]string{"device:GPU:", "/gpu:"} {
		if j := strings.Index(attr, p); j >= 0 {
			return deviceAfter(attr, j+len(p))
		}
	}
	return -1
}

// tensorElements multiplies the dims of the first "[d,d,…]" in line.
func tensorElements(line string) (int64, bool) {
	j := strings.IndexByte(line, '[')
	if j < 0 {
		return 0, false
	}
	end := strings.IndexByte(line[j:], ']')
	if end < 0 {
		return 0, false
	}
	dims := line[j+1 : j+end]
	n := int64(1)
	for _, d := range strings.Split(dims, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue // "[]" is a scalar
		}
		v, e, ok := intAt(d, 0)
		if !ok || e != len(d) {
			return 0, false
		}
		if v != 0 && n > (1<<62)/v {
			return 0, false
		}
		n *= v
	}
	return n, true
}

// firstField returns the name at the start of s: a device path, allocator or
// dtype name (letters, digits and "_:/.-"), up to any other byte (a space, a
// bracket, an ANSI colour code a logger put after it); a sentence's full
// stop after it is not part of it.
func firstField(s string) string {
	for j := 0; j < len(s); j++ {
		if c := s[j]; !isDigit(c) && !isLetter(c) && c != '_' && c != ':' && c != '/' && c != '.' && c != '-' {
			s = s[:j]
			break
		}
	}
	return strings.TrimRight(s, ".")
}

// parseStreamExecutor reads the stream executor's device allocation failure
// (cuda_driver.cc / gpu_driver.cc), exact bytes in parentheses:
//
//	failed to allocate <h> (<n> bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory
//
// <h> is HumanReadableNumBytes(bytes) and <n> the same request exact (the
// argument of GpuDriver::DeviceAllocate); <n> is used. Ports print the
// status by number and may leave the exact count out: hipTensorFlow's
// "failed to allocate 8.00G from device: hipError_t(1002)" (<h> is read
// then). The status must mean out of memory, in words or as the API's
// out-of-memory code (oomStatusCode).
func parseStreamExecutor(text string) (Result, bool) {
	if !containsAny(text, "OUT_OF_MEMORY", "OutOfMemory", "f memory", "rror_t(") {
		return absent, false
	}
	const anchor = "failed to allocate "
	for from := 0; ; {
		i := indexFrom(text, anchor, from)
		if i < 0 {
			return absent, false
		}
		from = i + len(anchor)
		w := window(text, from)
		n, p, ok := sizeAt(w, 0)
		if !ok {
			continue
		}
		if strings.HasPrefix(w[p:], " (") {
			exact, e, ok := intAt(w, p+2)
			if !ok || !strings.HasPrefix(w[e:], " bytes)") {
				continue
			}
			n, p = exact, e+len(" bytes)")
		}
		if !strings.HasPrefix(w[p:], " from device") {
			continue
		}
		line := w[p:]
		if nl := strings.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl]
		}
		if !strings.Contains(line, "OUT_OF_MEMORY") && !strings.Contains(line, "out of memory") && !strings.Contains(line, "OutOfMemory") && !oomStatusCode(line) {
			continue
		}
		r := newResult(tfOrJAX(text))
		r.RequestedBytes = n
		return r, true
	}
}

// oomStatusCode reports a status printed as "<api>Error_t(<code>)" whose code
// is that API's out-of-memory error: 2 (cudaErrorMemoryAllocation,
// hipErrorOutOfMemory) or HIP's older hipErrorMemoryAllocation, 1002
// (hip_runtime_api.h).
func oomStatusCode(line string) bool {
	i := strings.Index(line, "rror_t(")
	if i < 0 {
		return false
	}
	v, e, ok := intAt(line, i+len("rror_t("))
	return ok && e < len(line) && line[e] == ')' && (v == 2 || v == 1002)
}

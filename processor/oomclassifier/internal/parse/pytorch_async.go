package parse

import "strings"

// The cudaMallocAsync backend (c10/cuda/CUDAMallocAsyncAllocator.cpp) prints
//
//	Allocation on device <d> would exceed allowed memory. (out of memory)
//	Currently allocated     : <A>
//	Requested               : <N>
//	Device limit            : <T>
//	Free (according to CUDA): <F>
//	PyTorch limit (set by user-supplied memory fraction)
//	                        : <L>
//
// <A> is bytes in live allocations (the driver owns the pool, so there is no
// PyTorch "reserved"); <L> is UINT64_MAX when no fraction is set, which does
// not fit in int64 and so stays absent.
func parsePyTorchMallocAsync(text string) (Result, bool) {
	const anchor = " would exceed allowed memory. (out of memory)"
	// Anchor on the rare '(' of "(out of memory)", then check the rest.
	const tail = "(out of memory)"
	i := -1
	for from := 0; ; {
		j := indexFrom(text, tail, from)
		if j < 0 {
			return absent, false
		}
		if k := j + len(tail) - len(anchor); k >= 0 && text[k:j+len(tail)] == anchor {
			i = k
			break
		}
		from = j + len(tail)
	}
	r := newResult(FrameworkPyTorch)
	const dev = "Allocation on device "
	if j := strings.LastIndex(text[max(0, i-32):i], dev); j >= 0 {
		r.DeviceIndex = deviceAfter(text, max(0, i-32)+j+len(dev))
	}
	w := window(text, i+len(anchor))
	r.AllocatedBytes = colonSize(w, "Currently allocated")
	r.RequestedBytes = colonSize(w, "Requested")
	r.TotalBytes = colonSize(w, "Device limit")
	r.FreeBytes = colonSize(w, "Free (according to CUDA)")
	r.LimitBytes = colonSize(w, "PyTorch limit (set by user-supplied memory fraction)")
	return r, true
}

// colonSize reads "<label><whitespace>: <size>", the whitespace possibly
// spanning a line break; -1 when absent or malformed.
func colonSize(s, label string) int64 {
	j := strings.Index(s, label)
	if j < 0 {
		return -1
	}
	p := j + len(label)
	for p < len(s) && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r') {
		p++
	}
	if p >= len(s) || s[p] != ':' {
		return -1
	}
	if v, _, ok := sizeAt(s, skipSpaces(s, p+1)); ok {
		return v
	}
	return -1
}

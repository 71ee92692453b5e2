package parse

import "strings"

// PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp) has printed
// two templates after "CUDA out of memory. Tried to allocate <size>":
//
//	< 2.1:  " (GPU <d>; <T> total capacity; <A> already allocated; <F> free;
//	        [<L> allowed; ]<R> reserved in total by PyTorch)" — and before 1.5
//	        "…; <F> free; <C> cached)"
//	>= 2.1: ". GPU <d> has a total capacity of <T> of which <F> is free.
//	        [Including non-PyTorch memory, this process has <P> memory in use. ]
//	        [Process <pid> has <M> memory in use. ]…[<L> allowed; ]Of the
//	        allocated memory <A> is allocated by PyTorch, [with <G> allocated in
//	        private pools (e.g., CUDA Graphs), ]and <U> is reserved by PyTorch
//	        but unallocated."
//
// ROCm builds print "HIP out of memory", XPU builds "XPU out of memory", and
// the newest device-generic allocator "Out of memory.". The device ordinal
// was once streamed as a char (c10::DeviceIndex), printing "GPU  has".
//
// The search anchors on "Tried to allocate " (a rare 'T' keeps strings.Index
// fast) and then checks the "ut of memory. " before it.
const pyTried, pyOOM = "Tried to allocate ", "ut of memory. "

func parsePyTorchCaching(text string) (Result, bool) {
	i, bare := -1, -1
	for from := 0; ; {
		j := indexFrom(text, pyTried, from)
		if j < 0 {
			break
		}
		if k := j - len(pyOOM); k >= 1 && text[k:j] == pyOOM && (text[k-1] == 'o' || text[k-1] == 'O') {
			i = k
			break
		}
		if bare < 0 {
			bare = j
		}
		from = j + len(pyTried)
	}
	var w string
	switch {
	case i >= 0:
		w = window(text, i+len(pyOOM)+len(pyTried))
	case bare >= 0:
		// "Tried to allocate" without the "out of memory." before it: a paste
		// that starts mid-message. Only the allocator's own sentence shape
		// after the size makes it PyTorch's.
		w = window(text, bare+len(pyTried))
		i = bare
	default:
		return parsePyTorchLegacyTail(text)
	}
	r := newResult(FrameworkPyTorch)
	if isHIP(text, i-1, w) {
		r.Framework = FrameworkROCm
	}
	req, p, ok := sizeAt(w, 0)
	if !ok {
		if bare == i {
			return absent, false
		}
		return parsePyTorchLegacyTail(text)
	}
	rest := w[p:]
	switch {
	case strings.HasPrefix(rest, " (GPU") || strings.HasPrefix(rest, " (NPU") || strings.HasPrefix(rest, " (MLU"):
		parsePyTorchLegacy(rest[len(" (GPU"):], &r)
	case strings.HasPrefix(rest, ". GPU") || strings.HasPrefix(rest, ". Device"):
		parsePyTorch2(rest, &r)
	case bare == i:
		return absent, false
	}
	r.RequestedBytes = req
	return r, true
}

// parsePyTorchLegacyTail recognises the parenthesis of the < 2.1 message on
// its own, "(GPU <d>; <T> total capacity; <A> already allocated; …)": a
// shipper that split the line, or a paste of only that part. The request
// size is then unknown.
func parsePyTorchLegacyTail(text string) (Result, bool) {
	const tail = " total capacity; "
	i := strings.Index(text, tail)
	if i < 0 {
		return absent, false
	}
	g := strings.LastIndex(text[max(0, i-48):i], "(GPU ")
	if g < 0 || !strings.Contains(window(text, i), " already allocated; ") {
		return absent, false
	}
	r := newResult(FrameworkPyTorch)
	parsePyTorchLegacy(text[max(0, i-48)+g+len("(GPU"):], &r)
	return r, true
}

// isHIP reports a ROCm build: "HIP" right before the anchor, or the
// PYTORCH_HIP_ALLOC_CONF hint in the message.
func isHIP(text string, start int, w string) bool {
	return (start >= 4 && text[start-4:start] == "HIP ") || strings.Contains(w, "PYTORCH_HIP_ALLOC_CONF")
}

// parsePyTorchLegacy reads "<d>; <T> total capacity; …)" (the text after "(GPU").
//
// c10/cuda/CUDACachingAllocator.cpp, 1.4 to 2.0 (the OOM branch of malloc):
// "(GPU " device "; " format_size(device_total) " total capacity; "
// format_size(stats.allocated_bytes[AGGREGATE].current) " already allocated; "
// format_size(device_free) " free; " allowed_info
// format_size(stats.reserved_bytes[AGGREGATE].current) " reserved in total by
// PyTorch)". device_free and device_total are cudaMemGetInfo's; allowed_info
// is "<L> allowed; " when set_per_process_memory_fraction set a limit.
// torch_npu's copy adds "<a> current active; " (stats.active_bytes), not read.
func parsePyTorchLegacy(s string, r *Result) {
	r.DeviceIndex = deviceAfter(s, 0)
	if end := strings.IndexByte(s, ')'); end >= 0 {
		s = s[:end+1]
	}
	r.TotalBytes = sizeLabel(s, " total capacity")
	r.AllocatedBytes = sizeLabel(s, " already allocated")
	if r.FreeBytes = sizeLabel(s, " free;"); r.FreeBytes < 0 {
		r.FreeBytes = sizeLabel(s, " free)")
	}
	r.LimitBytes = sizeLabel(s, " allowed;")
	// 1.4 to 2.0 print stats.reserved_bytes as "<R> reserved in total by
	// PyTorch" (R toolkits built on libtorch spell it "Pytorch").
	if r.ReservedBytes = sizeLabel(s, " reserved in total by Py"); r.ReservedBytes >= 0 {
		return
	}
	// Up to 1.3 the last figure was "<C> cached", and C is not the
	// allocator's total: c10/cuda/CUDACachingAllocator.cpp at v1.3.0 prints
	// format_size(stats.amount_cached - stats.amount_allocated), the cached
	// blocks not in use. Reserved (allocated + cached) is therefore A + C.
	if c := sizeLabel(s, " cached"); c >= 0 && r.AllocatedBytes >= 0 && c <= 1<<62 && r.AllocatedBytes <= 1<<62 {
		r.ReservedBytes = r.AllocatedBytes + c
	}
}

// parsePyTorch2 reads the 2.1+ sentences after "Tried to allocate <size>".
func parsePyTorch2(s string, r *Result) {
	// The numbers end where the advice begins; cutting there keeps the
	// searches below short.
	for _, advice := range [...]string{"If reserved but unallocated", "Please use `empty_cache`", "\n"} {
		if j := strings.Index(s, advice); j >= 0 {
			s = s[:j]
		}
	}
	// 2.1.0 to 2.1.2 misspelt it "capacty" (fixed in 2.2).
	hasTotal := " has a total capacity of "
	k := strings.Index(s, hasTotal)
	if k < 0 {
		hasTotal = " has a total capacty of "
		if k = strings.Index(s, hasTotal); k < 0 {
			return
		}
	}
	if g := strings.Index(s[:k], "GPU"); g >= 0 {
		r.DeviceIndex = deviceAfter(s, g+len("GPU"))
	} else if g := strings.Index(s[:k], "Device"); g >= 0 {
		r.DeviceIndex = deviceAfter(s, g+len("Device"))
	}
	if v, _, ok := sizeAt(s, k+len(hasTotal)); ok {
		r.TotalBytes = v
	}
	if j := strings.Index(s, " of which "); j >= 0 {
		if v, _, ok := sizeAt(s, j+len(" of which ")); ok {
			r.FreeBytes = v
		}
	}
	if j := strings.Index(s, "this process has "); j >= 0 {
		if v, _, ok := sizeAt(s, j+len("this process has ")); ok {
			r.ProcessBytes = v
		}
	}
	r.LimitBytes = sizeLabel(s, " allowed; ")
	if j := strings.Index(s, "Of the allocated memory "); j >= 0 {
		if v, _, ok := sizeAt(s, j+len("Of the allocated memory ")); ok {
			r.AllocatedBytes = v
		}
	}
	// c10/cuda/CUDACachingAllocator.cpp, every 2.x release with this template
	// (checked in four stored versions of the file, up to the
	// docs.pytorch.org-URL releases): "Of the allocated memory "
	// format_size(allocated_bytes + allocated_in_private_pools) " is allocated
	// by PyTorch, " ["with " format_size(allocated_in_private_pools) "
	// allocated in private pools (e.g., CUDA Graphs), "] "and "
	// format_size(reserved_bytes - allocated_bytes -
	// allocated_in_private_pools) " is reserved by PyTorch but unallocated."
	// The first figure already includes the private pools, so reserved =
	// first + second; the private figure is a part of the first, not added.
	if u := sizeLabel(s, " is reserved by PyTorch but unallocated"); u >= 0 && r.AllocatedBytes >= 0 && r.AllocatedBytes <= 1<<62 && u <= 1<<62 {
		r.ReservedBytes = r.AllocatedBytes + u
	}
	assignProcesses(listedProcesses(s), r)
}

// listedProcesses collects every "Process <pid> has <M> memory in use" entry.
func listedProcesses(s string) []Process {
	var out []Process
	for from := 0; ; {
		j := indexFrom(s, "Process ", from)
		if j < 0 {
			return out
		}
		from = j + len("Process ")
		pid, p, ok := intAt(s, from)
		if !ok || !strings.HasPrefix(s[p:], " has ") || pid > 1<<31-1 {
			continue
		}
		v, e, ok := sizeAt(s, p+len(" has "))
		if !ok || !strings.HasPrefix(s[e:], " memory in use") {
			continue
		}
		out = append(out, Process{PID: int(pid), Bytes: v})
		from = e
	}
}

// assignProcesses applies the rule in the package doc to the listed entries.
func assignProcesses(procs []Process, r *Result) {
	if len(procs) == 0 {
		return
	}
	if r.ProcessBytes >= 0 { // "this process has X" named the failing one
		r.OtherProcesses = procs
		return
	}
	if len(procs) == 1 {
		r.PID, r.ProcessBytes = procs[0].PID, procs[0].Bytes
		r.Derived |= DerivedProcess
		return
	}
	failing := -1
	if r.ReservedBytes >= 0 {
		for i, p := range procs {
			if p.Bytes >= r.ReservedBytes {
				if failing >= 0 { // two could be it: ambiguous
					failing = -1
					break
				}
				failing = i
			}
		}
	}
	if failing < 0 {
		r.CandidateProcesses = procs
		return
	}
	r.PID, r.ProcessBytes = procs[failing].PID, procs[failing].Bytes
	r.Derived |= DerivedProcess
	r.OtherProcesses = make([]Process, 0, len(procs)-1)
	r.OtherProcesses = append(r.OtherProcesses, procs[:failing]...)
	r.OtherProcesses = append(r.OtherProcesses, procs[failing+1:]...)
}

// sizeLabel returns the size written right before the first label in s, or -1.
func sizeLabel(s, label string) int64 {
	j := strings.Index(s, label)
	if j < 0 {
		return -1
	}
	if v, ok := sizeBefore(s, j); ok {
		return v
	}
	return -1
}

// parsePyTorchBare recognises PyTorch OOMs that state no numbers: the legacy
// THC "cuda runtime error (2) : out of memory at …/THC/…", a truncated
// "CUDA out of memory" / "HIP out of memory", or the exception name alone.
func parsePyTorchBare(text string) (Result, bool) {
	switch {
	case precededBy(text, "(2) : out of memory", "cuda runtime error "),
		strings.Contains(text, "THCudaCheck FAIL") && strings.Contains(text, "error=2 : out of memory"),
		strings.Contains(text, "CUDA out of memory") && !isTalk(text, strings.Index(text, "CUDA out of memory")),
		torchOOMError(text):
		return newResult(FrameworkPyTorch), true
	case strings.Contains(text, "HIP out of memory"):
		return newResult(FrameworkROCm), true
	}
	return absent, false
}

// torchOOMError reports "torch.OutOfMemoryError" or
// "torch.cuda.OutOfMemoryError", anchored on the rare 'O'.
func torchOOMError(text string) bool {
	const name = "OutOfMemoryError"
	for from := 0; ; {
		i := indexFrom(text, name, from)
		if i < 0 {
			return false
		}
		if strings.HasSuffix(text[:i], "torch.") || strings.HasSuffix(text[:i], "torch.cuda.") {
			return true
		}
		from = i + len(name)
	}
}

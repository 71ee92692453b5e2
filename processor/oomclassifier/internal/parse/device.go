package parse

import "strings"

// Device kinds, the values of Result.DeviceKind. They become the
// gpu.oom.device.kind attribute, so they are part of the contract.
const (
	DeviceCUDA     = "cuda"     // NVIDIA: CUDA runtime/driver, and the default when the text names no other
	DeviceROCm     = "rocm"     // AMD ROCm/HIP
	DeviceXPU      = "xpu"      // Intel GPU (PyTorch XPU, IPEX, Level Zero)
	DeviceMPS      = "mps"      // Apple GPU through PyTorch's Metal Performance Shaders backend
	DeviceMetal    = "metal"    // Apple GPU through Metal directly (ggml's Metal backend)
	DeviceVulkan   = "vulkan"   // any vendor's GPU through Vulkan
	DeviceWebGPU   = "webgpu"   // any vendor's GPU through wgpu / WebGPU
	DeviceDirectML = "directml" // any vendor's GPU through DirectML (Windows, WSL)
	DeviceNPU      = "npu"      // Huawei Ascend NPU (torch_npu, CANN)
	DeviceTPU      = "tpu"      // Google TPU HBM
	DeviceHost     = "host"     // pinned (page-locked) host memory allocated through a GPU API: the host's RAM (pinned.go)
)

// NonNVIDIA reports a device kind that is never an NVIDIA GPU, so an OOM of
// that kind must not be matched to an NVML GPU. Vulkan, WebGPU and DirectML
// run on NVIDIA GPUs too: the text does not say, so they may be matched.
func NonNVIDIA(kind string) bool {
	switch kind {
	case DeviceROCm, DeviceXPU, DeviceMPS, DeviceMetal, DeviceNPU, DeviceTPU, DeviceHost:
		return true
	}
	return false
}

// NonNVIDIA reports that the message names a device that is not an NVIDIA GPU.
func (r *Result) NonNVIDIA() bool { return NonNVIDIA(r.DeviceKind) }

// deviceMarkers name the device kind from words the message carries, most
// specific first: a CANN error on an NPU logged by a module called
// gpu_worker.py is an NPU's, a wgpu panic over Vulkan names wgpu.
var deviceMarkers = [...]struct{ word, kind string }{
	{"NPU", DeviceNPU}, {"Ascend", DeviceNPU}, {"EL0004", DeviceNPU}, {"rtMalloc", DeviceNPU}, {"torch_npu", DeviceNPU},
	{"XPU", DeviceXPU}, {"Level Zero", DeviceXPU}, {"xpu:", DeviceXPU},
	{"MPS backend", DeviceMPS}, {"MPS allocated", DeviceMPS},
	{"ggml_metal", DeviceMetal}, {"kIOGPUCommandBuffer", DeviceMetal}, {"Metal", DeviceMetal},
	{"TPU", DeviceTPU}, {"_HBM", DeviceTPU}, {"tpu_", DeviceTPU},
	{"DML allocator", DeviceDirectML}, {"device:DML", DeviceDirectML}, {"dml_", DeviceDirectML}, {"DirectML", DeviceDirectML},
	{"directml", DeviceDirectML}, {"GPU video memory", DeviceDirectML},
	{"wgpu", DeviceWebGPU}, {"WebGPU", DeviceWebGPU},
	{"Vulkan", DeviceVulkan}, {"vulkan", DeviceVulkan}, {"VK_ERROR", DeviceVulkan}, {"vk::", DeviceVulkan}, {"OutOfDeviceMemory", DeviceVulkan},
	{"HIP", DeviceROCm}, {"ROCm", DeviceROCm}, {"rocm", DeviceROCm}, {"hipError", DeviceROCm}, {"MIOpen", DeviceROCm}, {"miopen", DeviceROCm}, {"amdgpu", DeviceROCm},
}

// deviceKind names the device a recognised message is about: the first
// marker found in its first windowLen bytes, else cuda. A recogniser whose
// framework implies the device (ROCm builds) sets it itself.
func deviceKind(text string, r *Result) string {
	if r.DeviceKind == DeviceHost {
		return DeviceHost
	}
	if r.Framework == FrameworkROCm {
		return DeviceROCm
	}
	w := window(text, 0)
	for _, m := range deviceMarkers {
		if strings.Contains(w, m.word) {
			return m.kind
		}
	}
	return DeviceCUDA
}

// parseDeviceMemory recognises the general shape of a failed device
// allocation that no template above claimed: a failure word joined to a
// device-memory noun, written in any case and with any of the separators
// libraries use ("out of device memory", OutOfDeviceMemory,
// VK_ERROR_OUT_OF_DEVICE_MEMORY, Memory_Allocation_Failure), or a status
// number that means "out of memory" next to the API that returned it (CUDA
// error 2, CUresult 2), minus talk about OOMs (advice, documentation,
// explanations) and host memory.
func parseDeviceMemory(text string) (Result, bool) {
	w := window(text, 0)
	at := deviceFailureAt(w)
	if at < 0 {
		return absent, false
	}
	if isNegative(w) || isTalk(w, at) {
		return absent, false
	}
	r := newResult(frameworkFromContext(w))
	readLabelledSizes(w, &r)
	r.DeviceIndex = deviceFromText(w)
	if r.Framework == FrameworkHAMi {
		r.DeviceIndex = hamiDevice(w)
	}
	return r, true
}

// deviceNouns name device memory after "out of" / "not enough" (folded).
var deviceNouns = [...]string{"device", "gpu", "vram", "video", "hbm", "npu", "xpu"}

// failureWords start the general shape, spelled with optional separators.
var failureWords = [...]string{"outof", "notenough", "failedtoallocate"}

// deviceFailureAt returns where a device-allocation failure shape starts in w, or -1.
func deviceFailureAt(w string) int {
	if i := memoryShapeAt(w); i >= 0 {
		return i
	}
	// Status numbers: cudaError_t and CUresult 2 are "out of memory".
	if i := cudaErrorTwo(w); i >= 0 {
		return i
	}
	// HAMi-core's quota check: "Device <d> OOM <new> / <limit>".
	if i := strings.Index(w, "[HAMI-core ERROR"); i >= 0 && hamiDevice(w) >= 0 {
		return i
	}
	// spark-rapids' GPU retry exceptions that lost a task (Cpu… ones are host memory).
	for from := 0; ; {
		i := indexFrom(w, "RetryOOM", from)
		if i < 0 {
			break
		}
		from = i + len("RetryOOM")
		if !strings.HasSuffix(w[:i], "Cpu") && !strings.HasSuffix(w[:i], "CpuSplitAnd") {
			return i
		}
	}
	return -1
}

// memoryShapeAt finds the shapes that name memory: a failure word, a device
// noun and "memory", or the noun first ("Memory_Allocation_Failure",
// "memory allocation of size N failed"); -1 when there is none. They are
// looked for only around a "memory": searching the whole text for each
// failure word cost every near miss (a line that passed the prefilter)
// microseconds.
func memoryShapeAt(w string) int {
	// One pass over the "memory"s: the first and last bound the failure
	// words' span; the noun-first shapes start at one of them.
	first, last, nounFirst, sized := -1, -1, -1, -1
	for m := indexFold(w, "memory", 0); m >= 0; m = indexFold(w, "memory", m+1) {
		if first < 0 {
			first = m
		}
		last = m
		if nounFirst < 0 && foldSepAt(w, m, "memoryallocationfailure") >= 0 {
			nounFirst = m
		}
		if sized < 0 && strings.HasPrefix(w[m:], "memory allocation of size ") {
			sized = m
		}
	}
	if first < 0 {
		return -1
	}
	if i := failureBeforeMemory(w, first, last); i >= 0 {
		return i
	}
	if nounFirst >= 0 {
		return nounFirst
	}
	if sized >= 0 && strings.Contains(w[sized:min(len(w), sized+64)], " failed") {
		return sized
	}
	return -1
}

// failureBeforeMemory finds a failure word followed within a few words by
// a device noun and "memory" ("out of device memory", OutOfDeviceMemory,
// "not enough GPU memory"): the word's end is at most 42 bytes before a
// "memory" (it must lie in the 48 bytes after the word), so only the span
// from the first "memory" (at first) back by that and the word's longest
// spelling, to the last "memory" (at last), is searched. -1 when there is none.
func failureBeforeMemory(w string, first, last int) int {
	for _, fw := range failureWords {
		for from := max(0, first-42-(2*len(fw)-1)); ; {
			i, e := indexFoldSep(w[:last], fw, from)
			if i < 0 {
				break
			}
			from = e
			tail := w[e:min(len(w), e+48)]
			if nounAt(tail) && containsFold(tail, "memory") {
				return i
			}
		}
	}
	return -1
}

// nounAt reports a device noun at the start of s after optional separators.
func nounAt(s string) bool {
	s = strings.TrimLeft(s, " _-")
	for _, n := range deviceNouns {
		if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
			return true
		}
	}
	return false
}

// cudaErrorTwo finds "CUDA error 2", "Cuda error: 2", "cuda error (2)" (any
// case) or an allocation call's "res=2" / "result=2": cudaErrorMemoryAllocation
// and CUDA_ERROR_OUT_OF_MEMORY are both 2. NCCL's own error 2 (a system
// error) is not "CUDA error".
func cudaErrorTwo(w string) int {
	if i := cudaErrorWordTwo(w); i >= 0 {
		return i
	}
	// The first " res=2" and the first " result=2", found from their "=2"
	// (a search for a label that starts with a space stops at every word).
	at := [2]int{-1, -1}
	labels := [2]string{" res", " result"}
	for from := 0; at[0] < 0 || at[1] < 0; {
		j := indexFrom(w, "=2", from)
		if j < 0 {
			break
		}
		for k, l := range labels {
			if at[k] < 0 && strings.HasSuffix(w[:j], l) {
				at[k] = j - len(l)
			}
		}
		from = j + 1
	}
	for k, i := range at {
		if end := i + len(labels[k]) + len("=2"); i >= 0 && (end == len(w) || !isDigit(w[end])) && containsFold(w[max(0, i-48):i], "alloc") {
			return i
		}
	}
	return -1
}

// cudaErrorWordTwo finds the status words of cudaErrorTwo followed by 2,
// anchored on a contiguous "cuda" (a separator inside it is no spelling
// anyone uses), then read with separators like the other words; -1 if none.
func cudaErrorWordTwo(w string) int {
	for i := indexFold(w, "cuda", 0); i >= 0; i = indexFold(w, "cuda", i+1) {
		if e := foldSepAt(w, i, "cudaerror"); e >= 0 && statusTwoAfter(w, e) {
			return i
		}
	}
	return -1
}

// statusTwoAfter reports a status of 2 after w[:e] (spaces, ':' or '('
// between, at least one): "CUDA error: 2", "cuda error (2)", not "2.1" or "21".
func statusTwoAfter(w string, e int) bool {
	j := e
	for j < len(w) && (w[j] == ' ' || w[j] == ':' || w[j] == '(') {
		j++
	}
	return j > e && j < len(w) && w[j] == '2' && (j+1 == len(w) || !isDigit(w[j+1]) && w[j+1] != '.')
}

// hamiDevice reads the ordinal of HAMi-core's "Device <d> OOM "; -1 if none.
func hamiDevice(w string) int {
	i := strings.Index(w, "]: Device ")
	if i < 0 {
		return -1
	}
	d, e, ok := intAt(w, i+len("]: Device "))
	if !ok || !strings.HasPrefix(w[e:], " OOM ") || d > 1<<20 {
		return -1
	}
	return int(d)
}

// talkWords before a failure phrase make it talk about an OOM rather than
// one: advice, documentation, explanation.
var talkWords = [...]string{"avoid", "prevent", "raises a", "catchable", "if you see", "if you get", "in case of", "reduce the risk"}

// hedgeWords in the same sentence before a failure phrase make it a guess
// or a wish about an OOM ("most likely your device is out of memory", "I am
// assuming you are facing out of memory", "should detect cuda out of
// memory"): a library states a failure, it does not hedge it. Only the
// sentence before the phrase is read: real messages hedge after it ("CUDA
// kernel errors might be asynchronously reported", TF's "maybe the
// environment variable").
var hedgeWords = [...]string{"likely", "assum", "should", "might", "probably", "maybe", "perhaps", "suspect", "guess"}

// isTalk reports whether the phrase at i is quoted or explained rather than
// reported: an advice word in the 64 bytes before it, a hedge earlier in
// its sentence, the phrase named as a quoted noun (`an "out of memory"
// error`), or " means" / a documentation literal's "“" right after its word.
func isTalk(w string, i int) bool {
	if i < 0 {
		return false
	}
	before := w[max(0, i-64):i]
	for _, t := range talkWords {
		if containsFold(before, t) {
			return true
		}
	}
	sentence := before[sentenceStart(before):]
	for _, h := range hedgeWords {
		if containsFold(sentence, h) {
			return true
		}
	}
	if quotedNoun(before) || proseBefore(sentence) || changeEntry(sentence) || narrated(before) && !sourceFramed(sentence) {
		return true
	}
	end := i
	for end < len(w) && w[end] != ' ' && w[end] != '\n' {
		end++
	}
	after := w[end:min(len(w), end+48)]
	return strings.HasPrefix(after, " means ") || strings.Contains(after, "``") || namedAsClass(after)
}

// conditionWords, read as whole words in the sentence before a failure
// phrase, make it a condition, an instruction or an explanation addressed to
// a reader ("If you see out of memory…", "This error means you ran out of
// memory", "what to do with CUDA out of memory errors"): a library's
// template states the failure first and puts any such sentence after it
// (PyTorch's "If reserved but unallocated memory is large…", TF's "Hint: If
// you want to see…").
var conditionWords = [...]string{"if", "when", "whenever", "unless", "you", "your", "means", "hints", "tips", "how to", "what to do"}

// changeVerbs, among the three words before a failure phrase, make it a
// change described (a pull request's title, a changelog entry, a commit
// subject: "Fix GPU CUDA out of memory error when …", "Handle CUDA out of
// memory in …"), also behind a log line's or a job runner's prefix: the
// failure is the verb's object, not something printed. A library's template
// does not name a repair just before its failure phrase.
var changeVerbs = [...]string{"fix", "fixes", "fixed", "fixing", "resolve", "resolves", "resolved", "resolving", "handle", "handles", "handled", "handling", "catch", "catches", "mitigate", "mitigates"}

// changeEntry reports one of changeVerbs (whole word, any case) among the
// last three words (runs of letters) of sentence.
func changeEntry(sentence string) bool {
	e := len(sentence)
	for w := 0; w < 3; w++ {
		for e > 0 && !isLetter(sentence[e-1]) {
			e--
		}
		s := e
		for s > 0 && isLetter(sentence[s-1]) {
			s--
		}
		if s == e {
			return false
		}
		for _, v := range changeVerbs {
			if len(v) == e-s && strings.EqualFold(sentence[s:e], v) {
				return true
			}
		}
		e = s
	}
	return false
}

// proseBefore reports a conditionWord in sentence (folded, whole words).
func proseBefore(sentence string) bool {
	for _, c := range conditionWords {
		for from := 0; ; {
			i := indexFold(sentence, c, from)
			if i < 0 {
				break
			}
			e := i + len(c)
			if (i == 0 || !isLetter(sentence[i-1])) && (e == len(sentence) || !isLetter(sentence[e])) {
				return true
			}
			from = e
		}
	}
	return false
}

// narrated reports a phrase told as something that happens ("running out
// of memory", "it runs out of device memory", "you ran out of memory"),
// not a status a library printed.
func narrated(before string) bool {
	for _, v := range [...]string{"run ", "ran ", "runs ", "running "} {
		if len(before) >= len(v) && strings.EqualFold(before[len(before)-len(v):], v) {
			return true
		}
	}
	return false
}

// sourceFramed reports a log frame with a source location before the
// phrase in its sentence, a library's own log line ("F tensorflow/…/
// gpu_device.cc:103] EigenAllocator for GPU ran out of memory"): what it
// narrates is its own failure.
func sourceFramed(sentence string) bool {
	for from := 0; ; {
		i := indexFrom(sentence, "] ", from)
		if i < 0 {
			return false
		}
		j := i
		for j > 0 && isDigit(sentence[j-1]) {
			j--
		}
		if j < i && j > 0 && sentence[j-1] == ':' {
			return true
		}
		from = i + 2
	}
}

// namedAsClass reports a phrase followed by a plural or a topic noun
// ("CUDA out of memory errors", "an out-of-memory issue"): the kind of
// failure talked about. A library's "Out of memory error on GPU 0" names
// one error, singular, and stays a report.
func namedAsClass(after string) bool {
	for _, n := range [...]string{" errors", " issues", " issue", " problems", " problem", " exceptions"} {
		if len(after) >= len(n) && strings.EqualFold(after[:len(n)], n) && (len(after) == len(n) || !isLetter(after[len(n)])) {
			return true
		}
	}
	return false
}

// sentenceStart is where the last sentence of s begins: after its last line
// break or sentence end (". ", "! ", "? "; a decimal point is no end).
func sentenceStart(s string) int {
	for j := len(s) - 1; j >= 0; j-- {
		switch s[j] {
		case '\n':
			return j + 1
		case '.', '!', '?':
			if j+1 < len(s) && s[j+1] == ' ' {
				return j + 2
			}
		}
	}
	return 0
}

// quotedNoun reports text before a phrase ending in an article and an
// opening quote: the phrase is the name of an error being talked about
// (`failed with an "out of memory" error`), not a status a library printed
// (candle's `DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")`). The
// quote may be JSON-escaped (`an \"out of memory\" error`).
func quotedNoun(before string) bool {
	for _, q := range [...]string{"\"", "“", "'"} {
		if b, ok := strings.CutSuffix(before, q); ok {
			b = strings.TrimSuffix(b, "\\") // a JSON-escaped quote as shipped
			return strings.HasSuffix(b, " an ") || strings.HasSuffix(b, " a ") || strings.HasSuffix(b, " the ")
		}
	}
	return false
}

package parse

import "strings"

// windowLen bounds how far past its anchor a recogniser reads: every template
// handled here fits in well under 4 KiB, and a bound keeps a 1 MiB body cheap.
const windowLen = 4096

// recogniser parses one template family; it reports false when its anchor
// is missing or the text is a look-alike.
type recogniser func(text string) (Result, bool)

// recognisers run most specific first: a body holding a detailed PyTorch
// message and a generic CUDA error string is the PyTorch one.
var recognisers = []recogniser{
	parsePyTorchCaching,
	parsePyTorchMallocAsync,
	parseTFBFC,
	parseTFTensor,
	parseXLA,
	parseOutOfMemoryAllocating,
	parseCuPyLegacy,
	parseGGML,
	// Before the CUDA codes their messages carry (cudaErrorMemoryAllocation).
	parseXGBoost,
	parseCatBoost,
	parseVLLM,
	parseKVCache,
	parseTGI,
	parseStreamExecutor,
	parsePyTorchBare,
	// NCCL before the library codes: a paste holding NCCL's "Cuda failure
	// 'out of memory'" with its calloc size and a later cuBLAS handle failure
	// is read from the NCCL lines, which state the size and device.
	parseNCCL,
	parseLibraryStatus,
	parseCheckStatus,
	parseCUDAGeneric,
	parseVocabulary,
	// The general shape last: a failure word and a device-memory noun.
	parseDeviceMemory,
}

// Parse reports whether text (a whole log body, possibly a multi-line
// traceback) contains a GPU allocation failure, and what it states. When ok
// is false the Result has every value absent and no framework.
func Parse(text string) (Result, bool) { return ParseOnHost(text, "") }

// ParseOnHost is Parse for a record from the host named host (its
// host.name, or ""): the host's name in the text never counts as device
// context (structure.go).
func ParseOnHost(text, host string) (Result, bool) {
	if !mayBeOOM(text) {
		return absent, false
	}
	// Only what could be a report is read: documentation markup, code and
	// host-memory reporters' lines are blanked in a copy (structure.go).
	if t, changed := reportText(text, host); changed {
		if !mayBeOOM(t) {
			return absent, false
		}
		text = t
	}
	return parseText(text)
}

// MayBeOOM is Parse's prefilter, for callers that scan many texts: false means the text is
// certainly no OOM message, without building a Result.
func MayBeOOM(text string) bool { return mayBeOOM(text) }

// MayBeOOMOrXid is MayBeOOM(text) || xid.MayBeLine(text), in one pass over
// text: for a caller that looks for both in every record (the logs
// processor's scan), false means the text is neither an OOM nor an Xid line.
func MayBeOOMOrXid(text string) bool { return prefilter(text, true) }

// parseText is Parse after the prefilter.
func parseText(text string) (Result, bool) {
	// A terminal or a paste may break a message anywhere, even inside a
	// label ("memory in \nuse", "Out \nof memory"): read the text with its
	// line breaks taken as spaces first, then as written.
	//
	// A shipper that delivers a JSON log line as it was written leaves the
	// message JSON-escaped inside it ("\n" for its line breaks, "\u003c"
	// for '<'). A one-line text with an escaped line break or quote is read
	// unescaped first (its numbers may sit across the escaped breaks); any
	// other text with a backslash is read unescaped last.
	// Pinned host memory first, on the lines as written (pinned.go): its
	// failures carry the GPU API's out-of-memory status, which the
	// templates below would take for a device's.
	if r, ok := recognisePinned(text); ok {
		return r, true
	}
	escaped := len(text) <= maxUnwrap && strings.IndexByte(text, '\\') >= 0
	oneLine := strings.IndexByte(text, '\n') < 0
	if escaped && oneLine && (strings.Contains(text, `\n`) || strings.Contains(text, `\"`)) {
		r, ok, blanked := recogniseUnescaped(text)
		if ok || blanked {
			// Blanked: the unescaped lines hold talk or code, which the
			// escaped one-line form would hide from structure.go.
			return r, ok
		}
		escaped = false // tried
	}
	if len(text) <= maxUnwrap && !oneLine {
		if r, ok := recognise(unwrap(text)); ok {
			return r, true
		}
	}
	if r, ok := recognise(text); ok {
		return r, true
	}
	if escaped {
		r, ok, _ := recogniseUnescaped(text)
		return r, ok
	}
	return absent, false
}

// recognisePinned is parsePinnedHost finished as recognise finishes a result.
func recognisePinned(text string) (Result, bool) {
	r, ok := parsePinnedHost(text)
	if ok {
		r.Stack = detectStack(text)
	}
	return r, ok
}

// recognise runs the recognisers in order on text.
func recognise(text string) (Result, bool) {
	for _, rec := range recognisers {
		if r, ok := rec(text); ok {
			if r.Stack == "" {
				r.Stack = detectStack(text)
			}
			r.DeviceKind = deviceKind(text, &r)
			return r, true
		}
	}
	return absent, false
}

// allocatesGPUBuffer reports "allocate CUDA…" or "allocate ROCm…", anchored
// on the rare capitalised device word rather than on "allocate".
func allocatesGPUBuffer(text string) bool {
	for _, dev := range [...]string{"CUDA", "ROCm"} {
		for from := 0; ; {
			i := indexFrom(text, dev, from)
			if i < 0 {
				break
			}
			if strings.HasSuffix(text[:i], "allocate ") {
				return true
			}
			from = i + len(dev)
		}
	}
	return false
}

// containsAny reports whether text contains one of the spellings; each
// starts with a rare byte, which keeps strings.Index fast on long bodies.
func containsAny(text string, spellings ...string) bool {
	for _, s := range spellings {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// detectStack names the serving stack a recognised message came from, from
// markers its logs carry (module paths, process names, launcher names).
func detectStack(text string) string {
	switch {
	case containsAny(text, "vllm", "vLLM", "Vllm", "VLLM"):
		return FrameworkVLLM
	case precededBy(text, "generation", "text_", "text-"): // text_generation_server, text-generation-launcher
		return FrameworkTGI
	case containsAny(text, "Ollama", "OLLAMA") || precededBy(text, "llama runner", "o", "") || precededBy(text, "llama", "o"):
		return FrameworkOllama
	}
	return ""
}

// precededBy reports an occurrence of word directly preceded by one of the
// prefixes ("" matches any). Searching for the word and checking backwards
// lets the caller pick whichever part of a marker starts with a rarer byte.
func precededBy(text, word string, prefixes ...string) bool {
	for from := 0; ; {
		i := indexFrom(text, word, from)
		if i < 0 {
			return false
		}
		for _, p := range prefixes {
			if strings.HasSuffix(text[:i], p) {
				return true
			}
		}
		from = i + len(word)
	}
}

// window returns text[i:] cut to windowLen bytes.
func window(text string, i int) string {
	if i < 0 {
		return ""
	}
	if len(text)-i > windowLen {
		return text[i : i+windowLen]
	}
	return text[i:]
}

// indexFrom is strings.Index starting at from; -1 when absent.
func indexFrom(s, sub string, from int) int {
	if from < 0 || from > len(s) {
		return -1
	}
	j := strings.Index(s[from:], sub)
	if j < 0 {
		return -1
	}
	return from + j
}

// deviceAfter parses an ordinal at s[i:] after optional spaces; -1 if none.
func deviceAfter(s string, i int) int {
	v, _, ok := intAt(s, skipSpaces(s, i))
	if !ok || v > 1<<20 {
		return -1
	}
	return int(v)
}

package parse

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
)

// The prefilter runs on every log record, so it must reject ordinary text in
// one pass without allocating. Every allocation-failure phrase the
// recognisers know (see vocabulary.go) contains, in any letter case, one of
//
//	"memory"  out of memory, OutOfMemoryError, OUT_OF_MEMORY, ErrorMemoryAllocation,
//	          Not enough memory, would exceed allowed memory, MemoryError
//	"alloc"   Failed to allocate, OOM when allocating, ALLOC_FAILED, AllocFailed,
//	          cudaMalloc failed, allocate CUDA0 buffer, ran out of memory trying to allocate
//	"capac"   has a total capacity of / the 2.1 misspelling "capacty"
//	"cuda"    a CUDA status stated only as a number: "CUDA error 2", "cudaError: 2" (cudaErrorTwo)
//
// or one of five that name no memory at all:
//
//	"cufft"   a CHECK on a cuFFT call returning CUFFT_ALLOC_FAILED ("== CUFFT_SUCCESS (2 vs. 0)")
//	"insuff"  cuSPARSE's "insufficient resources", "insufficient memory"
//	"buffer maximum"  ggml Metal's "buffer '<name>' size N is larger than buffer maximum of M"
//	"RetryOOM"  spark-rapids' RetryOOM / SplitAndRetryOOM ("retry" folded, "OOM" as written)
//	"Dst tensor is not initialized"   TensorFlow's failed device copy destination
//	"That was not possible"   the TPU runtime's "Attempting to reserve <h> … That was not possible"
//	"Maximum pool size exceeded"   RMM's pool_memory_resource
//	"Device" … "OOM"  HAMi-core's quota check, "[HAMI-core ERROR …]: Device 0 OOM 27147995136 / 25757220864"
//	          (its "allocator.c" holds "alloc" only while the check stays in that file)
//
// Each holds a "key" that is rare in ordinary text: the "ry" of "memory"
// and "retry" and the "ty" of "capacity" and "capacty", the "ll" of "alloc",
// the "ff" of "cufft", "insufficient" and "buffer", the "ud" of "cuda", the
// "si" of "possible" and "size" (case folded), and, as written, the "Ds" of
// TensorFlow's "Dst" and the "De" of HAMi-core's "Device" (TF prints the
// sentence as written; its only other rare letter, the 'z', is in every ISO
// timestamp's "Z"). MayBeOOMOrXid adds the capital 'V' of the kernel
// driver's "NVRM: " tag (internal/xid), so that a collector tells an
// ordinary record from both kinds in one read of its text. Every key but the
// 'V' is a pair, a byte and the byte before it: a 'y' alone is in "bytes",
// "latency", "sync" and "key", and a 'D' alone in every "DEBUG", and on
// ordinary 60-byte lines each such stop cost a verification and a second
// scan.
//
// The scan flags the second byte of each pair, a folded 'y' after an 'r' or
// a 't', the second of two folded 'l's or 'f's, a folded 'd' after a 'u' or
// 'i' after an 's', an 'e' or 's' after a 'D' as written, and a 'V' as
// written; only at a flagged byte does keyWordAt compare the whole word. On
// amd64 the flags come from vector compares, 32 or 16 bytes at a time
// (prefilter_amd64.s; the purego build tag turns it off); elsewhere
// prefilterSWAR below reads the text eight bytes at a time and flags in a
// few word operations per key (SWAR, "SIMD within a register"), a text
// shorter than eight bytes being one word padded with zero bytes: about
// sixty integer operations per eight bytes and no call, against about
// thirty vector operations per 32 bytes for AVX2 (README, "What a record
// costs"). The two passes flag the same key bytes; the word pass may flag
// a few more (a borrow, a byte >= 0x80 before a letter), which keyWordAt
// turns down, so the two answer the same for every text. Each key is one
// or two compares per block in the vector pass, so a key costs little
// there. A new word is given a key only when it holds none of these:
// "RetryOOM" rides on the "ry" of "retry" (a doubled-'o' key for it cost
// the word pass about a fifth more on every line).

const (
	hi   = 0x8080808080808080
	ones = 0x0101010101010101
	fold = 0x2020202020202020 // sets the ASCII lower-case bit
)

// mayBeOOM reports whether text may hold an allocation failure: it holds one
// of the key words above. It never allocates and never writes.
func mayBeOOM(text string) bool { return prefilter(text, false) }

// prefilterSWAR is mayBeOOM, or with xidToo MayBeOOMOrXid, in portable Go:
// one pass over text, eight bytes at a time, then the last bytes in one word
// that overlaps the bytes already read, instead of a byte-by-byte loop.
// prefilter is this function where there is no vectorised flag pass
// (prefilter_generic.go), and the reference the amd64 one is tested against
// (prefilter_amd64.go).
func prefilterSWAR(text string, xidToo bool) bool {
	n := len(text)
	if n < 8 {
		m := keyBits(shortWord(text), 0) & (1<<(8*n) - 1)
		return m != 0 && keyWordIn(text, 0, m, xidToo)
	}
	p := unsafe.StringData(text)
	var prev uint64 // the previous word; its top byte precedes this word's first
	i := 0
	for ; i+8 <= n; i += 8 {
		w := word(p, i)
		x, before := w|fold, w<<8|prev>>56
		// keyBits(w, prev) spelled out: keyBits is over the compiler's inlining
		// budget, and a call per word cost the loop three times its work.
		if m := (foldedKeys(x, before|fold) | writtenKeys(w, before)) &^ x & hi; m != 0 && keyWordIn(text, i, m, xidToo) {
			return true
		}
		prev = w
	}
	if i == n {
		return false
	}
	// The last word overlaps bytes the loop has seen; its first byte, whose predecessor
	// it leaves out, is one of them. A key there is only checked again.
	m := keyBits(word(p, n-8), 0)
	return m != 0 && keyWordIn(text, n-8, m, xidToo)
}

// word loads text[i:i+8] (p: the text's bytes) as a little-endian word: the
// text's first byte is the word's lowest. The fixed-size array spares a
// bounds check per word; prefilter only asks for words inside the text.
func word(p *byte, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(p), i))[:])
}

// shortWord is a text of fewer than eight bytes as word would load it, the
// bytes past its end zero.
func shortWord(text string) uint64 {
	var w uint64
	for k := range len(text) {
		w |= uint64(text[k]) << (8 * k)
	}
	return w
}

// dstUninitialized is tensorflow/core/common_runtime/gpu/gpu_util.cc
// PrepareCopy's status when the copy's destination tensor got no buffer.
const dstUninitialized = "Dst tensor is not initialized"

// keyBits flags, in the high bit of each byte, the key bytes of the word w
// (prev: the word before it, whose top byte precedes w's first): each folded
// 'y' after a folded 'r' or 't', each folded 'l' or 'f' that equals the
// folded byte before it, each folded 'd' after a folded 'u' and 'i' after an
// 's', each 'e' and 's' after a 'D', all three as written, and each 'V' as
// written. A key is a zero byte of w ^ key*ones (folded or as written); a
// doubled letter is a zero byte of (x ^ key) | (x ^ before), before being x
// shifted up one byte, zero only where both are: one test covers "is the
// key" and "equals the byte before"; a pair is a zero byte of
// (x ^ key) | (before ^ key').
//
// A zero byte v of a word u sets the high bit of that byte of u - ones, and
// possibly (a borrow) of bytes above it, never of a byte below the lowest
// zero one: a spurious flag only costs a verification, and a key is never
// missed. The subtraction also sets the high bit of bytes >= 0x81; "&^ x"
// clears those once for all keys, with the word's own high bits: a key byte
// is ASCII, so a byte >= 0x80 (UTF-8 text) is never one, and an ASCII byte
// gives bytes < 0x80 in every tested word (but for a pair's first half after
// a non-ASCII byte, whose spurious flag only costs a verification).
func keyBits(w, prev uint64) uint64 {
	x, before := w|fold, w<<8|prev>>56
	return (foldedKeys(x, before|fold) | writtenKeys(w, before)) &^ x & hi
}

// foldedKeys is keyBits' part for the folded keys, before "&^ x & hi": x is
// the folded word, before each byte's folded predecessor.
func foldedKeys(x, before uint64) uint64 {
	const ys, rs, ts = 'y' * ones, 'r' * ones, 't' * ones
	const ls, fs, us, ds, ss, is = 'l' * ones, 'f' * ones, 'u' * ones, 'd' * ones, 's' * ones, 'i' * ones
	same, y := x^before, x^ys
	ry, ty := y|(before^rs), y|(before^ts)
	l, f := x^ls|same, x^fs|same
	ud, si := (x^ds)|(before^us), (x^is)|(before^ss)
	return (ry - ones) | (ty - ones) | (l - ones) | (f - ones) | (ud - ones) | (si - ones)
}

// writtenKeys is keyBits' part for the keys as written, before "&^ x & hi":
// w is the word, before each byte's predecessor.
func writtenKeys(w, before uint64) uint64 {
	const capD, es, ss, capV = 'D' * ones, 'e' * ones, 's' * ones, 'V' * ones
	d := before ^ capD
	return ((w ^ es | d) - ones) | ((w ^ ss | d) - ones) | ((w ^ capV) - ones)
}

// keyWordIn checks each flagged byte of the word at text[i:i+8].
func keyWordIn(text string, i int, m uint64, xidToo bool) bool {
	for ; m != 0; m &= m - 1 {
		if keyWordAt(text, i+bits.TrailingZeros64(m)>>3, xidToo) {
			return true
		}
	}
	return false
}

// keyWordAt reports whether the key byte at i belongs to "memory", "capacity",
// "capacty" or "retry" followed by "OOM" as written (a 'y' at i), "alloc"
// (the second 'l' at i), "cuda" (the 'd' at i), "possible" and "size" of the
// phrases above (the 'i' at i), "cufft", "insuff" or "buffer maximum" (the second
// 'f' at i), case-insensitively but for "OOM" and "er maximum"; or, as
// written, to dstUninitialized (its 's' at i) or to a "Device" followed
// somewhere by "OOM" (its 'e' at i), or, with xidToo, to the Xid tag "NVRM: "
// (its 'V' at i). Each checks its key's byte before i too: the word pass may
// flag a byte without it.
func keyWordAt(s string, i int, xidToo bool) bool {
	switch s[i] {
	case 's', 'e':
		// HAMi-core's "Device <d> OOM " is read with its line breaks taken as
		// spaces too (parseText): any text between the two words passes.
		if i == 0 || s[i-1] != 'D' {
			return false
		}
		d := s[i-1:]
		return strings.HasPrefix(d, dstUninitialized) || strings.HasPrefix(d, "Device") && strings.Contains(d, "OOM")
	case 'V':
		return xidToo && i > 0 && xid.MayBeLine(s[i-1:min(len(s), i+5)])
	}
	switch s[i] | 0x20 {
	case 'd':
		return foldedSuffix(s[:i+1], "cud") && i+1 < len(s) && s[i+1]|0x20 == 'a'
	case 'i':
		// The two phrases are matched as written (allocPhrases); their other
		// words may be apart from these by any line break or escape.
		return foldedWordAt(s, i-4, "possible") && strings.Contains(s[:i], "That") ||
			foldedWordAt(s, i-1, "size") && strings.Contains(s[i:], "exceeded")
	case 'y':
		// "memory" and "retry" end in "ry", "capacity" and "capacty" in "ty" (the
		// vector pass flags no other 'y'; the word pass may).
		if i < 4 { // "retry"
			return false
		}
		switch s[i-1] | 0x20 {
		case 'r':
			return foldedSuffix(s[:i+1], "memory") || strings.HasPrefix(s[i+1:], "OOM") && foldedSuffix(s[:i+1], "retry")
		case 't':
			return foldedSuffix(s[:i+1], "capacity") || foldedSuffix(s[:i+1], "capacty")
		}
		return false
	case 'l':
		// The "ll" is checked here too, as for every key: the word pass may flag
		// a byte that is no key (a borrow, a byte >= 0x80 before it), the
		// vectorised one never does, and both must say the same.
		return foldedSuffix(s[:i+1], "all") && i+2 < len(s) && s[i+1]|0x20 == 'o' && s[i+2]|0x20 == 'c'
	case 'f':
		return (foldedSuffix(s[:i+1], "cuff") && i+1 < len(s) && s[i+1]|0x20 == 't') || foldedSuffix(s[:i+1], "insuff") ||
			foldedSuffix(s[:i+1], "ff") && strings.HasPrefix(s[i+1:], "er maximum") // ggml Metal's "larger than buffer maximum"
	}
	return false
}

// foldedWordAt reports whether s holds word (lower case) at i, ignoring ASCII case.
func foldedWordAt(s string, i int, word string) bool {
	return i >= 0 && i+len(word) <= len(s) && foldedSuffix(s[:i+len(word)], word)
}

// foldedSuffix reports whether s ends with word (lower case), ignoring ASCII case.
func foldedSuffix(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	s = s[len(s)-len(word):]
	for j := 0; j < len(word); j++ {
		if s[j]|0x20 != word[j] {
			return false
		}
	}
	return true
}

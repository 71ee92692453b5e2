package parse

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"
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
//
// or one of five that name no memory at all:
//
//	"cufft"   a CHECK on a cuFFT call returning CUFFT_ALLOC_FAILED ("== CUFFT_SUCCESS (2 vs. 0)")
//	"insuff"  cuSPARSE's "insufficient resources", "insufficient memory"
//	"buffer maximum"  ggml Metal's "buffer '<name>' size N is larger than buffer maximum of M"
//	"RetryOOM"  spark-rapids' RetryOOM / SplitAndRetryOOM ("retry" folded, "OOM" as written)
//	"Dst tensor is not initialized"   TensorFlow's failed device copy destination
//
// All but the last hold a "key" that is rare in ordinary text: the 'y' of
// "memory", "capacity" and "retry", the "ll" of "alloc", the "ff" of
// "cufft", "insufficient" and "buffer" (case folded). The scan reads the
// text eight bytes at a time and flags, in a few word operations per key,
// the bytes that are a folded 'y' or the second of two folded 'l's or 'f's
// (SWAR, "SIMD within a register"); only at a flagged byte does it compare
// the whole word. A line without a flag costs about one pass of a few
// integer operations per eight bytes. Each key costs every line about five
// operations per eight bytes, so a new word is given a key only when it
// holds none of these three: "RetryOOM" rides on the 'y' of "retry" (a
// doubled-'o' key for it cost every line about a fifth more).
//
// TensorFlow's sentence has no such key: its only rare letter, the 'z', is
// in every ISO timestamp's "Z". It is looked for last, as written (TF prints
// it in that case), from each capital 'D' that the vectorised
// strings.IndexByte finds: a few nanoseconds on a line, where a per-byte 'z'
// key cost more on every timestamped line.

const (
	hi   = 0x8080808080808080
	ones = 0x0101010101010101
	fold = 0x2020202020202020 // sets the ASCII lower-case bit
)

// zeroBytes has the high bit set in each byte of x that is zero, and
// possibly in bytes above a zero byte (a borrow), never in a byte below the
// lowest zero one. A spurious flag only costs a verification; a zero byte is
// never missed, so no key word is.
func zeroBytes(x uint64) uint64 {
	return (x - ones) &^ x & hi
}

// mayBeOOM reports whether text may hold an allocation failure: it holds one
// of the key words above. It never allocates and never writes: the string's
// bytes are viewed as a slice only to load eight at a time.
func mayBeOOM(text string) bool {
	b := unsafe.Slice(unsafe.StringData(text), len(text))
	var prev uint64 // the previous folded word; its top byte precedes this word's first
	i := 0
	for ; len(b) >= 32; b, i = b[32:], i+32 {
		x0 := binary.LittleEndian.Uint64(b[0:8]) | fold
		x1 := binary.LittleEndian.Uint64(b[8:16]) | fold
		x2 := binary.LittleEndian.Uint64(b[16:24]) | fold
		x3 := binary.LittleEndian.Uint64(b[24:32]) | fold
		p := prev
		prev = x3
		// One test for the 32 bytes keeps few values live; the rare
		// block with a flag recomputes each word's flags.
		if (keyBits(x0, p)|keyBits(x1, x0)|keyBits(x2, x1)|keyBits(x3, x2))&hi == 0 {
			continue
		}
		if m := keyBits(x0, p) & hi; m != 0 && keyWordIn(text, i, m) {
			return true
		}
		if m := keyBits(x1, x0) & hi; m != 0 && keyWordIn(text, i+8, m) {
			return true
		}
		if m := keyBits(x2, x1) & hi; m != 0 && keyWordIn(text, i+16, m) {
			return true
		}
		if m := keyBits(x3, x2) & hi; m != 0 && keyWordIn(text, i+24, m) {
			return true
		}
	}
	for ; len(b) >= 8; b, i = b[8:], i+8 {
		x := binary.LittleEndian.Uint64(b) | fold
		m := keyBits(x, prev) & hi
		prev = x
		if m != 0 && keyWordIn(text, i, m) {
			return true
		}
	}
	if n := len(b); n > 0 && len(text) >= 8 {
		// The last n < 8 bytes: the text's last eight bytes in one word,
		// its flags in the bytes already scanned masked off, instead of a
		// loop with a branch per byte (a 60-byte line has four such bytes).
		j := len(text) - 8
		x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(text[j:]), 8)) | fold
		var before uint64
		if j > 0 {
			before = uint64(text[j-1]|0x20) << 56
		}
		if m := keyBits(x, before) & hi &^ (1<<(8*(8-n)) - 1); m != 0 && keyWordIn(text, j, m) {
			return true
		}
	} else {
		for ; i < len(text); i++ {
			c := text[i] | 0x20
			if c == 'y' || ((c == 'l' || c == 'f') && i > 0 && text[i-1]|0x20 == c) {
				if keyWordAt(text, i) {
					return true
				}
			}
		}
	}
	// A line holds few capital Ds; a body full of them goes to one
	// vectorised substring search instead of a call per 'D'.
	from := 0
	for n := 0; n < 8; n, from = n+1, from+1 {
		j := strings.IndexByte(text[from:], 'D')
		if j < 0 {
			return false
		}
		if from += j; strings.HasPrefix(text[from:], dstUninitialized) {
			return true
		}
	}
	return strings.Contains(text[from:], dstUninitialized)
}

// dstUninitialized is tensorflow/core/common_runtime/gpu/gpu_util.cc
// PrepareCopy's status when the copy's destination tensor got no buffer.
const dstUninitialized = "Dst tensor is not initialized"

// keyBits flags the key bytes of the folded word x (prev: the folded word
// before it, whose top byte precedes x's first) in the high bit of each
// byte, once masked with hi: each 'y', and each 'l' or 'f' that equals the
// byte before it. A doubled letter is a zero byte of (x ^ key) | (x ^
// x-shifted-by-one-byte): both must be zero, so one test covers "is the
// key" and "equals the byte before". The final "& hi" is left to the caller
// so that a block of words pays it once.
//
// A zero byte v of a word w sets the high bit of that byte of w - ones
// (zeroBytes). zeroBytes also clears the flags of bytes >= 0x81, which the
// subtraction leaves set; here that is done once for the three keys, with
// x's own high bits: a key byte is ASCII, so the bytes of x >= 0x80 (UTF-8
// text) are never keys, and an ASCII byte of x gives bytes < 0x80 in all
// three words (but for the "same" part after a non-ASCII byte, whose
// spurious flag only costs a verification). Three zeroBytes would cost
// every line four more operations per eight bytes.
func keyBits(x, prev uint64) uint64 {
	const ys, ls, fs = 'y' * ones, 'l' * ones, 'f' * ones
	same := x ^ (x<<8 | prev>>56)
	y, l, f := x^ys, x^ls|same, x^fs|same
	return ((y - ones) | (l - ones) | (f - ones)) &^ x
}

// keyWordIn checks each flagged byte of the word at text[i:i+8].
func keyWordIn(text string, i int, m uint64) bool {
	for ; m != 0; m &= m - 1 {
		if keyWordAt(text, i+bits.TrailingZeros64(m)>>3) {
			return true
		}
	}
	return false
}

// keyWordAt reports whether the key byte at i belongs to "memory", "capacity",
// "capacty" or "retry" followed by "OOM" as written (a 'y' at i), "alloc"
// (the second 'l' at i), "cufft", "insuff" or "buffer maximum" (the second
// 'f' at i), case-insensitively but for "OOM" and "er maximum".
func keyWordAt(s string, i int) bool {
	switch s[i] | 0x20 {
	case 'y':
		// "memory" and "retry" end in "ry", "capacity" and "capacty" in "ty": one
		// byte turns down most English words with a 'y'.
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
		return i >= 2 && s[i-2]|0x20 == 'a' && i+2 < len(s) && s[i+1]|0x20 == 'o' && s[i+2]|0x20 == 'c'
	case 'f':
		return (foldedSuffix(s[:i+1], "cuff") && i+1 < len(s) && s[i+1]|0x20 == 't') || foldedSuffix(s[:i+1], "insuff") ||
			strings.HasPrefix(s[i+1:], "er maximum") // ggml Metal's "larger than buffer maximum"
	}
	return false
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

package parse

import (
	"encoding/binary"
	"math/bits"
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
// except three that name no memory at all, each with its own key:
//
//	"cufft"   a CHECK on a cuFFT call returning CUFFT_ALLOC_FAILED ("== CUFFT_SUCCESS (2 vs. 0)")
//	"insuff"  cuSPARSE's "insufficient resources", "insufficient memory"
//	"Dst tensor is not initialized"   TensorFlow's failed device copy destination
//
// Each of those words holds a "key" that is rare in ordinary text: the 'y' of
// "memory" and "capacity", the "ll" of "alloc", the "ff" of "cufft" and
// "insufficient", the 'z' of "initialized" (case folded). The scan reads the
// text eight bytes at a time and flags, in a few word operations per key, the
// bytes that are a folded 'y' or 'z' or the second of two folded 'l's or 'f's
// (SWAR, "SIMD within a register"); only at a flagged byte does it compare
// the whole word. ('z' also flags ISO timestamps' "Z"; that costs one short
// comparison.)
// A line without a flag costs about one pass of a few integer operations per
// eight bytes.

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
	var prevL, prevF uint64 // bit 63 set when the previous word ended in a folded 'l' / 'f'
	i := 0
	for ; len(b) >= 32; b, i = b[32:], i+32 {
		x0 := binary.LittleEndian.Uint64(b[0:8]) | fold
		x1 := binary.LittleEndian.Uint64(b[8:16]) | fold
		x2 := binary.LittleEndian.Uint64(b[16:24]) | fold
		x3 := binary.LittleEndian.Uint64(b[24:32]) | fold
		m0, l0, f0 := keyBytes(x0, prevL, prevF)
		m1, l1, f1 := keyBytes(x1, l0, f0)
		m2, l2, f2 := keyBytes(x2, l1, f1)
		m3, l3, f3 := keyBytes(x3, l2, f2)
		prevL, prevF = l3, f3
		if m0|m1|m2|m3 == 0 {
			continue
		}
		if keyWordIn(text, i, m0) || keyWordIn(text, i+8, m1) || keyWordIn(text, i+16, m2) || keyWordIn(text, i+24, m3) {
			return true
		}
	}
	for ; len(b) >= 8; b, i = b[8:], i+8 {
		var m uint64
		m, prevL, prevF = keyBytes(binary.LittleEndian.Uint64(b)|fold, prevL, prevF)
		if m != 0 && keyWordIn(text, i, m) {
			return true
		}
	}
	for ; i < len(text); i++ {
		c := text[i] | 0x20
		if c == 'y' || c == 'z' || ((c == 'l' || c == 'f') && i > 0 && text[i-1]|0x20 == c) {
			if keyWordAt(text, i) {
				return true
			}
		}
	}
	return false
}

// keyBytes flags the key bytes of the folded word x: each 'y' and 'z', and
// each 'l' or 'f' preceded by the same letter (prevL, prevF: the previous
// word's 'l' and 'f' flags, whose top byte is the one before x's first).
// It returns the flags and x's own 'l' and 'f' flags for the next word.
func keyBytes(x, prevL, prevF uint64) (m, l, f uint64) {
	const ys, zs, ls, fs = 'y' * ones, 'z' * ones, 'l' * ones, 'f' * ones
	l, f = zeroBytes(x^ls), zeroBytes(x^fs)
	m = zeroBytes(x^ys) | zeroBytes(x^zs) | l&(l<<8|prevL>>56) | f&(f<<8|prevF>>56)
	return m, l, f
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
// "capacty" (a 'y' at i), "alloc" (the second 'l' at i), "cufft" or "insuff"
// (the second 'f' at i) or "dst tensor is not initialized" (its 'z' at i),
// case-insensitively.
func keyWordAt(s string, i int) bool {
	switch s[i] | 0x20 {
	case 'y':
		return foldedSuffix(s[:i+1], "memory") || foldedSuffix(s[:i+1], "capacity") || foldedSuffix(s[:i+1], "capacty")
	case 'l':
		return i >= 2 && s[i-2]|0x20 == 'a' && i+2 < len(s) && s[i+1]|0x20 == 'o' && s[i+2]|0x20 == 'c'
	case 'f':
		return (foldedSuffix(s[:i+1], "cuff") && i+1 < len(s) && s[i+1]|0x20 == 't') || foldedSuffix(s[:i+1], "insuff")
	case 'z':
		return foldedSuffix(s[:i+1], "dst tensor is not initializ")
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

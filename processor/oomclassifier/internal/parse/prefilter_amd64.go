//go:build amd64 && !purego

package parse

import "golang.org/x/sys/cpu"

// useAVX2 picks nextKey's 32-byte AVX2 blocks over its 16-byte SSE2 ones for
// texts of 32 bytes or more; tests turn it off to check the SSE2 path too.
var useAVX2 = cpu.X86.HasAVX2

// prefilter is prefilterSWAR with the flagging done in vector registers
// (prefilter_amd64.s): 32 bytes at a time in AVX2 where the CPU has it, else
// 16 in SSE2 (baseline on every amd64, and the path for texts shorter than
// 32 bytes). nextKey returns the next key byte, and keyWordAt decides there
// as it does for the word pass: an ordinary line is one call and no flag.
// nextKey flags exactly the key bytes (the word pass may flag a few more,
// which keyWordAt turns down), so both say the same of every text.
func prefilter(text string, xidToo bool) bool {
	for i := nextKey(text, 0); i < len(text); i = nextKey(text, i+1) {
		if keyWordAt(text, i, xidToo) {
			return true
		}
	}
	return false
}

// nextKey returns the index of the first key byte of text at or after from,
// or len(text) if there is none; from must be >= 0. A key byte b is, with
// folded = b|0x20 and before the byte preceding it (none for the text's
// first byte), folded too but where it says "as written": folded 'y' with
// before 'r' or 't'; folded 'l' or 'f' with before the same; folded 'd' with
// before 'u'; folded 'i' with before 's'; 'e' or 's' as written with before
// 'D' as written; 'V' as written. It reads only text's bytes.
//
//go:noescape
func nextKey(text string, from int) int

package parse

import "strings"

// Case-insensitive search without allocating. A text reaches these only
// after the prefilter passed it, but then every recogniser searches it for
// several folded words: a byte-by-byte walk per word (what these did before
// the first held-out batch) cost microseconds on a few hundred bytes. Instead each
// word is anchored on its rarest byte, found in either case with the
// vectorised strings.IndexByte, and compared in full only there, the way
// strings.Index itself skips to its first byte.

// containsFold reports whether s contains sub, ASCII case-insensitively,
// without allocating. sub must be lower case. Only letters are folded: '_'
// (0x5f) folded like a letter would be 0x7f and never match itself.
func containsFold(s, sub string) bool { return indexFold(s, sub, 0) >= 0 }

// shortFold is the length below which a byte-by-byte walk is cheaper than
// the calls that find an anchor.
const shortFold = 48

// indexFold returns the index of the first occurrence of sub (lower case) in
// s at or after from, ignoring ASCII case; -1 when there is none.
func indexFold(s, sub string, from int) int {
	from = max(from, 0) // as indexFoldSep: a negative start searches from the beginning
	n := len(sub)
	if n == 0 {
		return min(from, len(s))
	}
	if len(s)-from < n {
		return -1
	}
	if len(s)-from < shortFold {
		for i := from; i+n <= len(s); i++ {
			if lowerASCII(s[i]) == sub[0] && equalFoldAt(s, i, sub) {
				return i
			}
		}
		return -1
	}
	a := anchorOf(sub)
	lo, up := sub[a], sub[a]
	if lo >= 'a' && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	// p walks the anchor's possible positions, [from+a, len(s)-n+a].
	end := len(s) - n + a + 1
	nextLo, nextUp := -1, -1 // cached finds of each case at or after p; -2: none left
	for p := from + a; p < end; p++ {
		if nextLo != -2 && nextLo < p {
			nextLo = findByte(s[:end], lo, p)
		}
		if up != lo && nextUp != -2 && nextUp < p {
			nextUp = findByte(s[:end], up, p)
		} else if up == lo {
			nextUp = -2
		}
		switch {
		case nextLo == -2 && nextUp == -2:
			return -1
		case nextUp == -2 || nextLo != -2 && nextLo < nextUp:
			p = nextLo
		default:
			p = nextUp
		}
		if equalFoldAt(s, p-a, sub) {
			return p - a
		}
	}
	return -1
}

// findByte is strings.IndexByte from p, as an index into s; -2 when absent.
func findByte(s string, c byte, p int) int {
	if j := strings.IndexByte(s[p:], c); j >= 0 {
		return p + j
	}
	return -2
}

// equalFoldAt reports whether s[i:] starts with sub (lower case), ignoring ASCII case.
func equalFoldAt(s string, i int, sub string) bool {
	if i < 0 || len(s)-i < len(sub) {
		return false
	}
	for j := 0; j < len(sub); j++ {
		if lowerASCII(s[i+j]) != sub[j] {
			return false
		}
	}
	return true
}

// byFrequency lists lower-case letters from the most to the least frequent
// in English text; a letter's place in it is its rarity.
const byFrequency = "etaoinsrhldcumfpgwybvkxjqz"

// rarity ranks each byte by how rarely log text holds it: a space 0, a digit
// 5, a letter its place in byFrequency (1–26), any other byte ('_', ':',
// '-', '<') 15, rarer than most letters.
var rarity = func() (t [256]uint8) {
	for c := range t {
		t[c] = 15
	}
	t[' '] = 0
	for c := '0'; c <= '9'; c++ {
		t[c] = 5
	}
	for i := 0; i < len(byFrequency); i++ {
		t[byFrequency[i]] = uint8(1 + i)
	}
	return t
}()

// anchorOf picks the byte of sub that is rarest in log text.
func anchorOf(sub string) int {
	best := 0
	for i := 1; i < len(sub); i++ {
		if rarity[sub[i]] > rarity[sub[best]] {
			best = i
		}
	}
	return best
}

// lowerASCII lower-cases an ASCII letter and leaves every other byte as is.
func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c | 0x20
	}
	return c
}

// indexFoldSep finds word (lower-case letters) in s from from, ignoring ASCII
// case and allowing one separator (' ', '_', '-') between its letters, as
// "out of", "Out_Of", "OutOf" and "OUT_OF" all spell "outof". It returns the
// match's start and end, or -1, -1. It walks byte by byte: give it a short
// window (see foldSepAt for anchoring it on a contiguous part).
func indexFoldSep(s, word string, from int) (int, int) {
	for i := max(from, 0); i < len(s); i++ {
		if lowerASCII(s[i]) != word[0] {
			continue
		}
		if e := foldSepAt(s, i, word); e >= 0 {
			return i, e
		}
	}
	return -1, -1
}

// foldSepAt matches word at s[i:] as indexFoldSep does; it returns the
// match's end, or -1.
func foldSepAt(s string, i int, word string) int {
	j, k := i, 0
	for k < len(word) && j < len(s) {
		if lowerASCII(s[j]) == word[k] {
			j, k = j+1, k+1
			continue
		}
		if k > 0 && (s[j] == ' ' || s[j] == '_' || s[j] == '-') && j+1 < len(s) && lowerASCII(s[j+1]) == word[k] {
			j++
			continue
		}
		break
	}
	if k == len(word) {
		return j
	}
	return -1
}

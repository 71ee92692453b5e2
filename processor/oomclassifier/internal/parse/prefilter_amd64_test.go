//go:build amd64 && !purego

package parse

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// isKeyAt is the definition nextKey must meet, a byte at a time: the byte at
// k after the byte before it (none at the text's first byte: no key follows a
// zero).
func isKeyAt(text string, k int) bool {
	before := byte(0)
	if k > 0 {
		before = text[k-1]
	}
	return isKey(before, text[k])
}

// checkNextKey compares nextKey(text, from) with the definition for every
// from in 0..len(text), and prefilter with the word pass it replaces, on the
// SSE2 path and, where the CPU has it, on the AVX2 one.
func checkNextKey(t *testing.T, text string) {
	t.Helper()
	defer func(was bool) { useAVX2 = was }(useAVX2)
	for _, avx2 := range []bool{false, cpu.X86.HasAVX2} {
		useAVX2 = avx2
		checkNextKeyPath(t, text)
	}
}

func checkNextKeyPath(t *testing.T, text string) {
	t.Helper()
	want := len(text)
	for from := len(text); from >= 0; from-- {
		if from < len(text) && isKeyAt(text, from) {
			want = from
		}
		if got := nextKey(text, from); got != want {
			t.Fatalf("nextKey(%q, %d) = %d; want %d (AVX2 %v)", text, from, got, want, useAVX2)
		}
	}
	for _, xidToo := range []bool{false, true} {
		if got, want := prefilter(text, xidToo), prefilterSWAR(text, xidToo); got != want {
			t.Fatalf("prefilter(%q, %v) = %v; the word pass says %v (AVX2 %v)", text, xidToo, got, want, useAVX2)
		}
	}
}

// keyPatterns: every key in each case, near misses of each (a pair's halves
// swapped or alone, the letter with bit 7 set), and bytes >= 0x80 before a
// key letter (where the word pass may flag spuriously).
var keyPatterns = []string{
	"ry", "RY", "rY", "ty", "TY", "Ty", "ll", "LL", "lL", "ff", "Ff", "ud", "UD", "uD", "si", "SI", "sI",
	"De", "Ds", "V", "y", "Y", "D", "dy", "yr", "yt", "de", "ds", "DE", "DS", "eD", "sD", "\xc4e", "\xc4s",
	"l", "f", "d", "i", "u", "s", "lf", "fl", "du", "is", "sd", "ui", "v", "dst",
	"\xf9", "\xd9", "r\xf9", "\xf2y", "\xf4y", "\xcc\xcc", "\xec\xec", "\xe6\xe6", "\xf5\xe4", "\xf3\xe9", "\xc4", "\xd6",
	"\xedl", "\xcdl", "\xedf", "\xf5d", "\xf3i", "l\xec", "\x80y", "\xff\xff",
	"alloc", "cuda", "cufft", "memory", "possible", "size", "NVRM: ", "Device OOM",
	"a\xedloc", "\xedfer maximum", "\xcdfer maximum", "ufer maximum",
}

// Every length from 0 to 80 with each pattern at every offset, on fillers of
// no key, of key letters that are no key alone, and of bytes >= 0x80: the
// first block, the blocks after it, the overlapping last block and every way
// of gathering a text shorter than a block.
//
// It is the package's slowest test (seconds, against milliseconds for the
// rest). Under mutation testing (scripts/mutate.sh sets PARSE_SAMPLE, and
// -short does the same) it checks a fixed sample instead: three fillers (no
// key, a key letter, a byte >= 0x80), every length, and per length the
// offsets 0, 1, every seventh and the last, which still puts each pattern in
// the first block, across a block boundary and at the text's end.
func TestNextKeyEveryLengthAndOffset(t *testing.T) {
	fills := []byte{'x', 'l', 'u', 's', 'd', 'i', 'f', 'r', 't', 'D', 'e', 'y', 0x80, 0xed, 0xff, 0}
	sampled := testing.Short() || os.Getenv("PARSE_SAMPLE") != ""
	if sampled {
		fills = []byte{'x', 'l', 0xed}
	}
	for _, fill := range fills {
		for n := 0; n <= 80; n++ {
			base := strings.Repeat(string([]byte{fill}), n)
			checkNextKey(t, base)
			for _, p := range keyPatterns {
				last := n - len(p)
				for off := 0; off <= last; off++ {
					if sampled && off > 1 && off%7 != 0 && off != last {
						continue
					}
					checkNextKey(t, base[:off]+p+base[off+len(p):])
				}
			}
		}
	}
}

func TestNextKeyCorpusAndOrdinaryLines(t *testing.T) {
	for _, c := range loadCited(t) {
		checkNextKey(t, c.Text)
	}
	for _, l := range ordinaryLines {
		checkNextKey(t, l)
		for n := range len(l) { // every prefix: every tail and short length on real text
			checkNextKey(t, l[:n])
		}
	}
}

// The words of ordinary lines that held a one-letter key before the keys were
// pairs stop nextKey no more: one call per such line, no verification.
func TestNextKeyOrdinaryWordsNoStop(t *testing.T) {
	for _, s := range []string{
		"2025-03-01T12:00:00.000Z DEBUG sync bytes=512 latency_ms=12 key",
		"DEBUG Dummy DISABLED Data by any key policy", "yyyy YYYY DDDD",
	} {
		if got := nextKey(s, 0); got != len(s) {
			t.Errorf("nextKey(%q, 0) = %d (%q); want no key", s, got, s[got])
		}
	}
}

// Random texts over an alphabet dense in key letters, their cases and their
// bytes with bit 7 set, of every length up to 300.
func TestNextKeyRandom(t *testing.T) {
	const alphabet = "yYlLfFdDuUiIsSvVrRtTeExX NRM:O\x80\xd9\xf9\xec\xcc\xed\xe4\xc4\xd6\xf5\xf3\xe9\xff\x00\x20"
	r := rand.New(rand.NewPCG(17, 5))
	b := make([]byte, 300)
	for range 20000 {
		n := r.IntN(len(b) + 1)
		for k := range n {
			if r.IntN(4) == 0 {
				b[k] = byte(r.IntN(256))
			} else {
				b[k] = alphabet[r.IntN(len(alphabet))]
			}
		}
		checkNextKey(t, string(b[:n]))
	}
}

// FuzzFlagsAsmEqualsGo: nextKey meets the definition at every position of
// any text, and prefilter says what the word pass says.
func FuzzFlagsAsmEqualsGo(f *testing.F) {
	for _, c := range loadCited(f) {
		f.Add(c.Text)
	}
	for _, l := range ordinaryLines {
		f.Add(l)
	}
	for _, p := range keyPatterns {
		f.Add("xxxxxxxxxxxxxxx" + p)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkNextKey(t, text)
	})
}

// BenchmarkPrefilterShortPaths is BenchmarkPrefilterShortOrXid on each of
// nextKey's paths, to tell whether AVX2's 32-byte blocks pay on 60-byte lines.
func BenchmarkPrefilterShortPaths(b *testing.B) {
	lines := shortLines()
	defer func(was bool) { useAVX2 = was }(useAVX2)
	for _, path := range []struct {
		name string
		avx2 bool
	}{{"sse2", false}, {"avx2", true}} {
		if path.avx2 && !cpu.X86.HasAVX2 {
			continue
		}
		b.Run(path.name, func(b *testing.B) {
			useAVX2 = path.avx2
			benchPrefilter(b, lines, MayBeOOMOrXid)
		})
	}
}

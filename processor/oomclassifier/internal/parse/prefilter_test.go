package parse

import (
	"slices"
	"strings"
	"testing"
)

// prefilterWords are the words mayBeOOM looks for (see prefilter.go), lower
// case: a text holding one of them, in any letter case, must pass; and so
// must one holding one of writtenWords with its first part in any case and
// the rest as written, or dstUninitialized as written.
var prefilterWords = []string{"memory", "capacity", "capacty", "alloc", "cuda", "cufft", "insuff"}

// writtenWords: the folded part, then the part compared as written.
var writtenWords = [][2]string{{"retry", "OOM"}, {"buff", "er maximum"}}

// writtenPhrases pass as written: TensorFlow's, the TPU runtime's, RMM's and HAMi-core's.
var writtenPhrases = []string{dstUninitialized, "That was not possible", "Maximum pool size exceeded", "Device 0 OOM"}

// referenceMayBeOOM is the plain definition mayBeOOM must agree with.
func referenceMayBeOOM(text string) bool {
	for _, w := range prefilterWords {
		if containsFold(text, w) {
			return true
		}
	}
	for _, w := range writtenWords {
		for from := 0; ; {
			i := indexFrom(text, w[1], from)
			if i < 0 {
				break
			}
			if foldedSuffix(text[:i], w[0]) {
				return true
			}
			from = i + 1
		}
	}
	for _, p := range writtenPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// withoutPrefilter is Parse minus its prefilter: what the recognisers alone
// would accept.
func withoutPrefilter(text string) bool {
	_, ok := parseText(text)
	return ok
}

// Every key word must be found at every offset and alignment of the eight-
// byte scan, in any letter case, including across word boundaries and in the
// byte-wise tail.
func TestPrefilterKeyWordsEveryOffset(t *testing.T) {
	words := append(append([]string(nil), writtenPhrases...), prefilterWords...)
	for _, w := range writtenWords {
		words = append(words, w[0]+"\x00"+w[1])
	}
	for _, w := range words {
		folded, written, _ := strings.Cut(w, "\x00")
		for _, word := range []string{folded, strings.ToUpper(folded), mixedCase(folded)} {
			if slices.Contains(writtenPhrases, w) {
				word = w // looked for as written
			}
			word += written
			for off := 0; off < 48; off++ {
				for _, tail := range []int{0, 3, 40} {
					text := strings.Repeat("x", off) + word + strings.Repeat("x", tail)
					if !mayBeOOM(text) {
						t.Fatalf("mayBeOOM(%q) = false", text)
					}
				}
			}
		}
	}
}

func mixedCase(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 1 && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}

// The prefilter must pass every OOM of the cited corpus: a message it drops
// is lost whatever the recognisers know.
func TestPrefilterPassesCitedOOMs(t *testing.T) {
	for _, c := range loadCited(t) {
		if c.OOM && !mayBeOOM(c.Text) {
			t.Errorf("%s (%s): prefilter drops an OOM", c.ID, c.file)
		}
	}
}

// The ordinary lines of the benchmark must be rejected by the prefilter
// alone, or the benchmark does not measure the path it claims to.
func TestPrefilterRejectsOrdinaryLines(t *testing.T) {
	for _, l := range ordinaryLines {
		if mayBeOOM(l) {
			t.Errorf("prefilter passes an ordinary line: %s", l)
		}
	}
}

// FuzzPrefilter checks the two properties the prefilter must keep: it never
// drops a text the recognisers accept, and it agrees with the plain
// definition whenever that says yes.
func FuzzPrefilter(f *testing.F) {
	for _, c := range loadCited(f) {
		f.Add(c.Text)
	}
	for _, l := range ordinaryLines {
		f.Add(l)
	}
	for _, w := range prefilterWords {
		f.Add("xxxxxxx" + strings.ToUpper(w))
	}
	for _, w := range writtenWords {
		f.Add("xxxxxxx" + strings.ToUpper(w[0]) + w[1])
		f.Add("xxxxxxx" + w[0] + strings.ToLower(w[1]))
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := mayBeOOM(text)
		if referenceMayBeOOM(text) && !got {
			t.Fatalf("mayBeOOM misses a key word in %q", text)
		}
		if !got && withoutPrefilter(text) {
			t.Fatalf("prefilter drops a text the recognisers accept: %q", text)
		}
	})
}

// The sentence must be found after many capital Ds too (past the per-'D' loop).
func TestPrefilterDstAfterManyDs(t *testing.T) {
	for n := 0; n < 20; n++ {
		text := strings.Repeat("DEBUG D ", n) + dstUninitialized + "."
		if !mayBeOOM(text) {
			t.Fatalf("%d Ds before the sentence: not passed", n)
		}
		if mayBeOOM(strings.Repeat("DEBUG D ", n) + "Dst tensor is not initialised.") {
			t.Fatalf("%d Ds: a different sentence passed", n)
		}
	}
}

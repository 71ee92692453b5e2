package parse

import "testing"

// Key words cut off by the end of the text, and key letters at offset 0 of
// the byte-by-byte tail, must be turned down without reading past either end.
func TestKeyWordAtTextEnds(t *testing.T) {
	for _, tt := range []struct {
		s    string
		i    int
		want bool
	}{
		{"alloc", 2, true},
		{"allo", 2, false}, // "alloc" cut one byte short
		{"all", 2, false},
		{"cufft", 3, true},
		{"cuff", 3, false},
		{"insuff", 5, true},
		{"memory", 5, true},
		{"emory", 4, false},
		{"cuda", 2, true},
		{"CUDA", 2, true},
		{"cud", 2, false}, // "cuda" cut one byte short
		{"xud", 2, false},
		{"cda", 1, false},
		{"That was not possible", 17, true},
		{"That was not POSSIBLE", 17, true},
		{"that was not possible", 17, false}, // "That" as written
		{"That was not possibl", 17, false},
		{"Maximum pool size exceeded", 14, true},
		{"Maximum pool size Exceeded", 14, false},
		{"pool siz exceeded", 6, false},
		{"size exceeded", 1, true}, // the word at the text's first byte (a line broken before it)
		{"si", 1, false},
	} {
		if got := keyWordAt(tt.s, tt.i, false); got != tt.want {
			t.Errorf("keyWordAt(%q, %d) = %v; want %v", tt.s, tt.i, got, tt.want)
		}
	}
	for _, s := range []string{"l", "f", "ll", "ff", "all", "allo", "cuff", "xxxxxxxxall", "xxxxxxxxcuff"} {
		if mayBeOOM(s) {
			t.Errorf("mayBeOOM(%q) = true", s)
		}
	}
	for _, s := range []string{"alloc", "cufft", "xxxxxxxxalloc", "xxxxxxxxcufft"} {
		if !mayBeOOM(s) {
			t.Errorf("mayBeOOM(%q) = false", s)
		}
	}
}

// "RetryOOM" passes on the 'y' of "retry" only with "OOM" as written after
// it; a retry without it, or a lower-case "oom", does not.
func TestPrefilterRetryOOM(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"com.nvidia.spark.rapids.jni.RetryOOM: task should retry operation", true},
		{"jni.SplitAndRetryOOM: Attempted", true},
		{"xRETRYOOM", true},
		{"RetryOOM", true},
		{"etryOOM", false},
		{"will retry operation", false},
		{"retryoom", false},
		{"RetryOO", false},
	} {
		if got := mayBeOOM(tt.s); got != tt.want {
			t.Errorf("mayBeOOM(%q) = %v; want %v", tt.s, got, tt.want)
		}
	}
}

// HAMi-core's quota check holds none of the folded keys once its source file is not
// allocator.c (found by FuzzPrefilter): its "Device" … "OOM" passes on the 'D'.
func TestPrefilterHAMiDeviceOOM(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"[HAMI-core ERROR]: Device 0 OOM ", true},
		{"[HAMI-core ERROR (pid:25 thread=1 oom.c:53)]: Device 0 OOM 27147995136 / 25757220864", true},
		{"[HAMI-core ERROR]: Device 0\nOOM 1 / 2", true},
		{"Device 0 OOM", true},
		{"Device 0 oom", false},
		{"device 0 OOM", false},
		{"[HAMI-core ERROR]: Devic 0 OOM", false},
		{"Device 0: NVIDIA A100-SXM4-80GB", false},
	} {
		if got := mayBeOOM(tt.s); got != tt.want {
			t.Errorf("mayBeOOM(%q) = %v; want %v", tt.s, got, tt.want)
		}
	}
}

// isKey is the key definition of keyBits and nextKey for a byte c after before.
func isKey(before, c byte) bool {
	f, b := c|0x20, before|0x20
	return f == 'y' && (b == 'r' || b == 't') || (f == 'l' || f == 'f') && b == f || f == 'd' && b == 'u' ||
		f == 'i' && b == 's' || (c == 'e' || c == 's') && before == 'D' || c == 'V'
}

// keyBits flags a word with no key byte nowhere: a spurious flag is allowed only above a
// true one (a borrow), so a word of two-letter pairs that are no key must give none. Every
// printable ASCII pair is tried at every position of a word, before and after a key-free
// word and at a word's first byte.
func TestKeyBitsNoKeyNoFlag(t *testing.T) {
	for a := byte(' '); a < 0x7f; a++ {
		for c := byte(' '); c < 0x7f; c++ {
			if isKey(a, c) || isKey('x', a) || isKey(c, 'x') {
				continue
			}
			for pos := 0; pos < 7; pos++ {
				word := []byte("xxxxxxxx")
				word[pos], word[pos+1] = a, c
				if m := keyBits(shortWord(string(word)), 'x'<<56); m != 0 {
					t.Fatalf("keyBits(%q) = %#x; want no flag", word, m)
				}
			}
			if m := keyBits(shortWord(string([]byte{c, 'x', 'x', 'x', 'x', 'x', 'x', 'x'})), uint64(a)<<56); m != 0 && !isKey(a, c) {
				t.Fatalf("keyBits(%q after %q) = %#x; want no flag", c, a, m)
			}
		}
	}
}

// keyBits flags every key: each pair (and the written 'V') at every byte of a word, its
// first half in the same word or, at the word's first byte, in the word before. The word
// pass is the code on every GOARCH but amd64, where the vector pass answers for it, so
// the equivalence tests alone would not notice a key it no longer flags when another key
// of the same message still passes it (every cited "capacity" comes with a "memory").
func TestKeyBitsEveryKeyFlagged(t *testing.T) {
	for a := byte(' '); a < 0x7f; a++ {
		for c := byte(' '); c < 0x7f; c++ {
			if !isKey(a, c) {
				continue
			}
			for pos := 1; pos < 8; pos++ {
				word := []byte("xxxxxxxx")
				word[pos-1], word[pos] = a, c
				if m := keyBits(shortWord(string(word)), 'x'<<56); m&(0x80<<(8*pos)) == 0 {
					t.Fatalf("keyBits(%q) = %#x; want byte %d flagged", word, m, pos)
				}
			}
			if m := keyBits(shortWord(string([]byte{c, 'x', 'x', 'x', 'x', 'x', 'x', 'x'})), uint64(a)<<56); m&0x80 == 0 {
				t.Fatalf("keyBits(%q after %q) = %#x; want byte 0 flagged", c, a, m)
			}
		}
	}
}

// keyWordAt checks the whole key at a doubled letter, as at every other key:
// the word pass may flag an 'l' or 'f' that follows no other (a byte >= 0x80
// before it), and its answer must not depend on that.
func TestKeyWordAtDoubledLetterOnly(t *testing.T) {
	for _, tt := range []struct {
		s    string
		i    int
		want bool
	}{
		{"alloc", 2, true},
		{"aLLoc", 2, true},
		{"aXloc", 2, false},
		{"a\xedloc", 2, false},
		{"buffer maximum", 3, true},
		{"BUFFer maximum", 3, true},
		{"xfer maximum", 1, false},
		{"fer maximum", 0, false},
		{"\xedfer maximum", 1, false},
	} {
		if got := keyWordAt(tt.s, tt.i, false); got != tt.want {
			t.Errorf("keyWordAt(%q, %d) = %v; want %v", tt.s, tt.i, got, tt.want)
		}
	}
	for _, s := range []string{"a\xedloc", "\xedfer maximum", "a\xcdloc"} {
		if prefilterSWAR(s, false) || prefilter(s, false) {
			t.Errorf("prefilter(%q) = true", s)
		}
	}
}

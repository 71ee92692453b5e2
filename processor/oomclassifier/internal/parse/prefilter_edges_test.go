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
	} {
		if got := keyWordAt(tt.s, tt.i); got != tt.want {
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

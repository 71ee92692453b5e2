package parse

import (
	"strings"
	"testing"
)

// indexFold's anchored search (texts of shortFold bytes or more) on words
// whose anchor is the first or last letter of the alphabet, or no letter.
func TestIndexFoldAnchorEdges(t *testing.T) {
	long := strings.Repeat(".", 60)
	for _, tt := range []struct {
		s, sub string
		want   int
	}{
		{"Q" + long, "q", 0}, // an upper-case anchor at offset 0, no lower-case one
		{"xQ" + long, "q", 1},
		{"QJ" + long, "qj", 0},
		{long + "A", "a", 60},
		{long + "a", "a", 60},
		{long + "Z", "z", 60},
		{long + "z", "z", 60},
		{long + "Zq", "zq", 60},
		{long + "X:", "x:", 60},
		{long + "_", "_", 60},
		{long + "[", "{", -1}, // '[' is '{' with the case bit cleared: no letter
		{long + "@", "`", -1},
	} {
		if got := indexFold(tt.s, tt.sub, 0); got != tt.want {
			t.Errorf("indexFold(%q, %q) = %d; want %d", tt.s, tt.sub, got, tt.want)
		}
	}
}

func TestAnchorOf(t *testing.T) {
	for sub, want := range map[string]int{"memory": 5, "e": 0, "ez": 1, "ze": 0, "out of": 5} {
		if got := anchorOf(sub); got != want {
			t.Errorf("anchorOf(%q) = %d; want %d", sub, got, want)
		}
	}
}

// Only ' ', '_' and '-' separate a word's letters, one at a time, never
// before its first.
func TestFoldSepAtSeparators(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"out-of", 6},
		{"out_of", 6},
		{"out of", 6},
		{"o-u-t-o-f", 9},
		{"outxof", -1},
		{"out.of", -1},
		{"out--of", -1},
		{"out-", -1},
		{"-outof", -1},
	} {
		if got := foldSepAt(tt.s, 0, "outof"); got != tt.want {
			t.Errorf("foldSepAt(%q, outof) = %d; want %d", tt.s, got, tt.want)
		}
	}
	if i, e := indexFoldSep("x OUT-OF y", "outof", 0); i != 2 || e != 8 {
		t.Errorf("indexFoldSep = %d, %d; want 2, 8", i, e)
	}
	if i, e := indexFoldSep("outxof", "outof", 0); i != -1 || e != -1 {
		t.Errorf("indexFoldSep(outxof) = %d, %d; want -1, -1", i, e)
	}
}

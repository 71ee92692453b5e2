package parse

import (
	"strings"
	"testing"

	"github.com/gpumem/otelcol-gpumem/internal/xid"
)

// MayBeOOMOrXid must say exactly what its two parts say: the OOM prefilter or
// the Xid tag anywhere in the text, at every offset and alignment of the scan
// (whole words, the overlapping last word, a text shorter than a word).
func TestMayBeOOMOrXidAgrees(t *testing.T) {
	texts := []string{
		"", "N", "V", "NV", "NVRM", "NVRM:", "NVRM: ", "xNVRM: Xid", "INFO VERBOSE NVRM: Xid (PCI:0000:3b:00): 79",
		"VNVRM: ", "NNVRM: ", "NVRMNVRM: ", "nvrm: ", "NVRM:x", "INFO step=1", "[12.3] NVRM: GPU at PCI:0000:3b:00.0",
		"DEBUG VERBOSE VV DD", "CUDA out of memory", "Dst tensor is not initialized.",
	}
	for off := 0; off < 24; off++ {
		for _, tag := range []string{"NVRM: ", "NVRM:", "NVRX: "} {
			texts = append(texts, strings.Repeat("V", off)+tag, strings.Repeat("x", off)+tag+strings.Repeat("y", off%9))
		}
	}
	for _, s := range texts {
		if got, want := MayBeOOMOrXid(s), mayBeOOM(s) || xid.MayBeLine(s); got != want {
			t.Errorf("MayBeOOMOrXid(%q) = %v; mayBeOOM || xid.MayBeLine says %v", s, got, want)
		}
	}
}

// The 'V' key is the Xid tag's only for MayBeOOMOrXid: mayBeOOM turns an Xid
// line down (the recognisers would too), and a 'V' with no 'N' before it, or
// at the text's first byte, is no tag.
func TestPrefilterXidKeyOnlyWhenAsked(t *testing.T) {
	line := "kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1"
	if mayBeOOM(line) {
		t.Errorf("mayBeOOM(%q) = true", line)
	}
	if !MayBeOOMOrXid(line) {
		t.Errorf("MayBeOOMOrXid(%q) = false", line)
	}
	for _, tt := range []struct {
		s    string
		i    int
		want bool
	}{
		{"NVRM: ", 1, true},
		{"VRM: x", 0, false},
		{"xVRM: x", 1, false},
		{"NVRM:", 1, false},
		{"xNVRM: ", 2, true},
	} {
		if got := keyWordAt(tt.s, tt.i, true); got != tt.want {
			t.Errorf("keyWordAt(%q, %d, xid) = %v; want %v", tt.s, tt.i, got, tt.want)
		}
		if keyWordAt(tt.s, tt.i, false) {
			t.Errorf("keyWordAt(%q, %d, no xid) = true", tt.s, tt.i)
		}
	}
}

func FuzzMayBeOOMOrXid(f *testing.F) {
	f.Add("kernel: NVRM: Xid (PCI:0000:3b:00): 79")
	f.Add("INFO VERBOSE NV")
	f.Add("NVRM: ")
	for _, l := range ordinaryLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := MayBeOOMOrXid(s), mayBeOOM(s) || xid.MayBeLine(s); got != want {
			t.Fatalf("MayBeOOMOrXid(%q) = %v; mayBeOOM || xid.MayBeLine says %v", s, got, want)
		}
	})
}

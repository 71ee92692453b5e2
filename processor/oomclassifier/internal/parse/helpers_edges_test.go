package parse

import (
	"strings"
	"testing"
)

// Edges of the small text helpers: a match at offset 0, at the very end of
// the text, and figures exactly at a limit.

func TestWindowAndIndexFromEdges(t *testing.T) {
	if got := window("abc", 0); got != "abc" {
		t.Errorf("window(abc, 0) = %q", got)
	}
	if got := window("abc", -1); got != "" {
		t.Errorf("window(abc, -1) = %q", got)
	}
	long := strings.Repeat("x", windowLen+10)
	if got := window(long, 5); len(got) != windowLen {
		t.Errorf("window of a long text is %d bytes; want %d", len(got), windowLen)
	}
	if got := window(long, 10); len(got) != windowLen {
		t.Errorf("window ending exactly at the text's end is %d bytes; want %d", len(got), windowLen)
	}
	for _, tt := range []struct {
		s, sub string
		from   int
		want   int
	}{
		{"ab", "", 2, 2}, // like strings.Index on the empty tail
		{"ab", "b", 1, 1},
		{"ab", "a", 1, -1},
		{"ab", "a", 3, -1},
		{"ab", "a", -1, -1},
	} {
		if got := indexFrom(tt.s, tt.sub, tt.from); got != tt.want {
			t.Errorf("indexFrom(%q, %q, %d) = %d; want %d", tt.s, tt.sub, tt.from, got, tt.want)
		}
	}
}

func TestMatchAtOffsetZero(t *testing.T) {
	// The first occurrence of the device word is at 0, not after
	// "allocate ": the search must go on to the second.
	if !allocatesGPUBuffer("CUDA0: failed to allocate CUDA0 buffer of size 1024") {
		t.Error("allocatesGPUBuffer missed the second CUDA")
	}
	if allocatesGPUBuffer("CUDA0 buffer") {
		t.Error("allocatesGPUBuffer accepted CUDA without allocate")
	}
	if !precededBy("generation; text_generation_server", "generation", "text_") {
		t.Error("precededBy missed the second occurrence")
	}
	if !cuResultOOM("CUresult error  result=2 file=csrc/torch_memory_saver.cpp") {
		t.Error("cuResultOOM missed a message at offset 0")
	}
	if !cuResultOOM("[torch_memory_saver.cpp] CUresult error result=2 ") { // shorter than the 40-byte cut
		t.Error("cuResultOOM missed a short message")
	}
	if cuResultOOM("CUresult error result=2 ") { // no wrapper: the prefilter drops it too
		t.Error("cuResultOOM accepted a line without the wrapper's name")
	}
	if cuResultOOM("CUresult error  file=csrc/torch_memory_saver.cpp result=2 ") {
		t.Error("cuResultOOM read result=2 past its 40 bytes")
	}
	if cuResultOOM("CUresult error  result=1 ") {
		t.Error("cuResultOOM accepted result=1")
	}
}

func TestReadLabelledSizesAtOffsetZero(t *testing.T) {
	// Tails of the Theano and Paddle 1.x messages in
	// testdata/oom/corpus/libraries.jsonl, starting at their labels.
	r := absent
	readLabelledSizes("Driver report 21364736 bytes free and 11715084288 bytes total", &r)
	if r.FreeBytes != 21364736 || r.TotalBytes != 11715084288 {
		t.Errorf("Theano: free %d, total %d", r.FreeBytes, r.TotalBytes)
	}
	r = absent
	readLabelledSizes("enforce allocating <= available failed, 10513462067 > 1369702144\nat [/home", &r)
	if r.RequestedBytes != 10513462067 || r.FreeBytes != 1369702144 {
		t.Errorf("Paddle: requested %d, free %d", r.RequestedBytes, r.FreeBytes)
	}
	r = absent
	readLabelledSizes("x: enforce allocating <= available failed, 10513462067 > 1369702144", &r)
	if r.RequestedBytes != 10513462067 || r.FreeBytes != 1369702144 {
		t.Errorf("Paddle at the end: requested %d, free %d", r.RequestedBytes, r.FreeBytes)
	}
}

func TestDeviceEdges(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{"cuda:1 out of memory", 1},
		{"out of memory on GPU ", -1},   // label at the very end
		{"out of memory on GPU  3", -1}, // the ordinal follows its label directly
		{"on GPU 1048576", 1 << 20},     // the largest ordinal taken
		{"on GPU 1048577", -1},
		{"a [7] b\nhost:1:2 NCCL WARN Cuda failure", -1}, // the bracket is on another line
		{"[3] alloc.h:178 NCCL WARN Cuda failure", -1},   // no host before the bracket
		{"h:1:2 [1048576] alloc.h:178 NCCL WARN x", 1 << 20},
		{"h:1:2 [1048577] alloc.h:178 NCCL WARN x", -1},
	} {
		if got := deviceFromText(tt.text); got != tt.want {
			t.Errorf("deviceFromText(%q) = %d; want %d", tt.text, got, tt.want)
		}
	}
	if got := deviceAfter("1048576", 0); got != 1<<20 {
		t.Errorf("deviceAfter(1048576) = %d", got)
	}
	if got := deviceAfter("1048577", 0); got != -1 {
		t.Errorf("deviceAfter(1048577) = %d", got)
	}
}

func TestLowerASCIIEdges(t *testing.T) {
	for c, want := range map[byte]byte{'A': 'a', 'Z': 'z', '@': '@', '[': '[', 'a': 'a', 'z': 'z', '_': '_'} {
		if got := lowerASCII(c); got != want {
			t.Errorf("lowerASCII(%q) = %q; want %q", c, got, want)
		}
	}
}

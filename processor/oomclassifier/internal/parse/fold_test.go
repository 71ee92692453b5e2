package parse

import (
	"strings"
	"testing"
)

// naiveIndexFold is the definition indexFold must agree with.
func naiveIndexFold(s, sub string, from int) int {
	for i := max(from, 0); i+len(sub) <= len(s); i++ {
		if equalFoldAt(s, i, sub) {
			return i
		}
	}
	if sub == "" && from <= len(s) {
		return max(from, 0)
	}
	return -1
}

func TestIndexFold(t *testing.T) {
	long := strings.Repeat("the quick brown fox jumps over the lazy dog ", 4)
	for _, tt := range []struct{ s, sub string }{
		{long + "Out Of Memory", "out of memory"},
		{long + "OUT OF MEMORY" + long, "out of memory"},
		{long + "mEmOrY", "memory"},
		{long + "memor", "memory"},
		{"MEMORY" + long, "memory"},
		{long + "yyyyyYYYYYmemorYyy", "memory"},
		{long + "HOST_MEM", "host_mem"},
		{long + "cpu:0", "cpu:"},
		{long + "CPU:0", "cpu:"},
		{long, "zzz"},
		{long, ""},
	} {
		for from := 0; from < len(tt.s); from += 7 {
			if got, want := indexFold(tt.s, tt.sub, from), naiveIndexFold(tt.s, tt.sub, from); got != want {
				t.Errorf("indexFold(%q, %q, %d) = %d; want %d", tt.s, tt.sub, from, got, want)
			}
		}
	}
}

func FuzzIndexFold(f *testing.F) {
	f.Add(strings.Repeat("x", 60)+"Memory", "memory", 0)
	f.Add(strings.Repeat("Yy", 40)+"cudaERROR", "cudaerror", 3)
	f.Fuzz(func(t *testing.T, s, sub string, from int) {
		sub = strings.ToLower(sub)
		if from > len(s)+1 || from < -1 {
			return
		}
		if got, want := indexFold(s, sub, from), naiveIndexFold(s, sub, from); got != want {
			t.Fatalf("indexFold(%q, %q, %d) = %d; want %d", s, sub, from, got, want)
		}
	})
}

// foldSepAt agrees with indexFoldSep at the start of each match.
func TestFoldSepAt(t *testing.T) {
	for _, tt := range []struct {
		s, word string
		end     int
	}{
		{"Out of device memory", "outof", 6},
		{"OUT_OF_MEMORY", "outof", 6},
		{"OutOfMemory", "outof", 5},
		{" outof", "outof", -1},
		{"o ut", "outof", -1},
		{"cuda error", "cudaerror", 10},
	} {
		if got := foldSepAt(tt.s, 0, tt.word); got != tt.end {
			t.Errorf("foldSepAt(%q, 0, %q) = %d; want %d", tt.s, tt.word, got, tt.end)
		}
	}
}

// walkMemoryShapeAt and walkCUDAErrorTwo are memoryShapeAt and
// cudaErrorTwo's status words as first written: each word
// searched over the whole text byte by byte. The anchored ones must find
// the same place.
func walkMemoryShapeAt(w string) int {
	for _, fw := range failureWords {
		for from := 0; ; {
			i, e := indexFoldSep(w, fw, from)
			if i < 0 {
				break
			}
			from = e
			tail := w[e:min(len(w), e+48)]
			if nounAt(tail) && naiveIndexFold(tail, "memory", 0) >= 0 {
				return i
			}
		}
	}
	if i, _ := indexFoldSep(w, "memoryallocationfailure", 0); i >= 0 {
		return i
	}
	if i := strings.Index(w, "memory allocation of size "); i >= 0 {
		if j := strings.Index(w[i:min(len(w), i+64)], " failed"); j >= 0 {
			return i
		}
	}
	return -1
}

func walkCUDAErrorWordTwo(w string) int {
	for from := 0; ; {
		i, e := indexFoldSep(w, "cudaerror", from)
		if i < 0 {
			return -1
		}
		from = e
		if statusTwoAfter(w, e) {
			return i
		}
	}
}

// walkResultTwo is cudaErrorTwo's " res=2" / " result=2" part as first written.
func walkResultTwo(w string) int {
	for _, l := range [...]string{" res=2", " result=2"} {
		if i := strings.Index(w, l); i >= 0 && (i+len(l) == len(w) || !isDigit(w[i+len(l)])) && naiveIndexFold(w[max(0, i-48):i], "alloc", 0) >= 0 {
			return i
		}
	}
	return -1
}

// checkAnchored compares the anchored searches with the walks on text.
func checkAnchored(t *testing.T, text string) {
	t.Helper()
	w := window(text, 0)
	if got, want := memoryShapeAt(w), walkMemoryShapeAt(w); got != want {
		t.Fatalf("memoryShapeAt = %d; the walk finds %d in %q", got, want, w)
	}
	if got, want := cudaErrorWordTwo(w), walkCUDAErrorWordTwo(w); got != want {
		t.Fatalf("cudaErrorWordTwo = %d; the walk finds %d in %q", got, want, w)
	}
	want := walkCUDAErrorWordTwo(w)
	if want < 0 {
		want = walkResultTwo(w)
	}
	if got := cudaErrorTwo(w); got != want {
		t.Fatalf("cudaErrorTwo = %d; the walk finds %d in %q", got, want, w)
	}
}

func TestAnchoredShapesAgreeWithWalk(t *testing.T) {
	for _, c := range loadCited(t) {
		checkAnchored(t, c.Text)
	}
	for _, l := range ordinaryLines {
		checkAnchored(t, l)
	}
	for _, s := range []string{
		"out ofailed to allocate device memory",                    // a word starting on another's last letter
		"failed to allocate gpu memory, then out of device memory", // the words' order, not their place
		"not enough GPU memory; Out_Of-Device_Memory",
		"OutOfDeviceMemory", "x out of  device memory", "out of memory on device memory",
		strings.Repeat("of ", 30) + "out of vram" + strings.Repeat(" ", 40) + "memory",
		"memory " + strings.Repeat("o", 50) + " out of gpu memory",
	} {
		checkAnchored(t, s)
	}
}

func FuzzAnchoredShapes(f *testing.F) {
	for _, c := range loadCited(f) {
		f.Add(c.Text)
	}
	f.Add("xx Out Of Device  Memory xx memory")
	f.Add("CUDA_ERROR: 2 cuda error (2) Cuda-Error 2")
	f.Add("cuMemAlloc res=21 res=2 result=2 alloc result=2")
	f.Add("xx memory allocation of size 12 failed Memory-Allocation_Failure")
	f.Fuzz(checkAnchored)
}

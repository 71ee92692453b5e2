package parse

import (
	"strings"
	"testing"
)

// Edges of the general device-memory shape (device.go): each form found at
// offset 0 of the window, HAMi's device 0, and a "memory" with no failure
// shape around it.

func TestDeviceFailureAtEdges(t *testing.T) {
	const hami = "[HAMI-core ERROR (pid:25 thread=139892685178688 allocator.c:53)]: Device 0 OOM 27147995136 / 25757220864"
	for _, tt := range []struct {
		w    string
		want int
	}{
		{"out of device memory", 0},
		{"Out of device memory while allocating", 0},
		{"CUDA error 2", 0},
		{"cuda error (2) at x.cu:12", 0},
		{"CUDA error 21", -1},
		{hami, 0},
		{"[HAMI-core ERROR (pid:25)]: Device x OOM 1 / 2", -1}, // no ordinal: not the quota check
		{"RetryOOM: task should retry", 0},
		{"CpuRetryOOM: host", -1},
		{"CpuRetryOOM: host; then GpuRetryOOM", len("CpuRetryOOM: host; then Gpu")},
		{"CpuSplitAndRetryOOM x SplitAndRetryOOM", len("CpuSplitAndRetryOOM x SplitAnd")},
		{"memory usage is fine", -1},
		{"memory: 12 GiB total, memory: 3 GiB used", -1},
	} {
		if got := deviceFailureAt(tt.w); got != tt.want {
			// Fatal: a wrong skip past a "Cpu…RetryOOM" may loop on the next case.
			t.Fatalf("deviceFailureAt(%q) = %d; want %d", tt.w, got, tt.want)
		}
	}
	pad := " ................................................................ "
	for _, tt := range []struct {
		w    string
		want int
	}{
		{"Memory_Allocation_Failure", 0},
		{"Memory_Allocation_Failure; Memory_Allocation_Failure", 0}, // the first one
		{"memory allocation of size 5 failed", 0},
		{"memory allocation of size 5 failed" + pad + "memory allocation of size 6 done", 0},
		{"memory allocation of size 6 done" + pad + "memory allocation of size 5 failed", -1}, // only the first is read
	} {
		if got := memoryShapeAt(tt.w); got != tt.want {
			t.Errorf("memoryShapeAt(%q) = %d; want %d", tt.w, got, tt.want)
		}
	}
	for _, w := range []string{"memory", "memory usage is fine", "GPU memory: 80 GiB"} {
		if got := memoryShapeAt(w); got != -1 {
			t.Errorf("memoryShapeAt(%q) = %d; want -1", w, got)
		}
	}
}

func TestParseDeviceMemoryEdges(t *testing.T) {
	r, ok := parseDeviceMemory("Out of device memory")
	if !ok {
		t.Fatal("parseDeviceMemory missed the shape at offset 0")
	}
	if r.DeviceIndex != -1 {
		t.Errorf("no device stated: DeviceIndex = %d", r.DeviceIndex)
	}
	// HAMi states its ordinal as "Device <d> OOM", which only hamiDevice reads.
	r, ok = parseDeviceMemory("[HAMI-core ERROR (pid:25 thread=1 allocator.c:53)]: Device 3 OOM 27147995136 / 25757220864")
	if !ok || r.Framework != FrameworkHAMi || r.DeviceIndex != 3 {
		t.Errorf("HAMi: ok %v, framework %q, device %d; want hami, 3", ok, r.Framework, r.DeviceIndex)
	}
	// Anyone else's device is read from the text, not from HAMi's label.
	r, ok = parseDeviceMemory("out of device memory on GPU 2")
	if !ok || r.DeviceIndex != 2 {
		t.Errorf("GPU 2: ok %v, device %d; want 2", ok, r.DeviceIndex)
	}
}

// A failure word spelled at its longest (a separator between every letter)
// may end 42 bytes before its "memory": the search for it starts that far
// and the spelling's length before the first "memory".
func TestFailureBeforeMemoryLongestSpelling(t *testing.T) {
	filler := "..................................." // 35 bytes: " device" + filler = 42
	w := "x: O_U_T_O_F device" + filler + "memory"
	if got := deviceFailureAt(w); got != 3 {
		t.Errorf("deviceFailureAt(%q) = %d; want 3", w, got)
	}
	w = "x: O_U_T_O_F device" + filler + ".memory" // one byte too far
	if got := deviceFailureAt(w); got != -1 {
		t.Errorf("deviceFailureAt(%q) = %d; want -1", w, got)
	}
}

func TestNounAtEdges(t *testing.T) {
	for s, want := range map[string]bool{"gpu": true, " _-GPU": true, "gp": false, "": false, " vram": true, "hb": false} {
		if got := nounAt(s); got != want {
			t.Errorf("nounAt(%q) = %v; want %v", s, got, want)
		}
	}
}

// "res=2" / "result=2" of an allocation call: the first of each label is read.
func TestCudaErrorTwoLabels(t *testing.T) {
	for _, tt := range []struct {
		w    string
		want int
	}{
		{"cuMemoryAllocate failed res=2", len("cuMemoryAllocate failed")},
		{"cuMemAlloc failed result=2", len("cuMemAlloc failed")},
		{"=2 alloc res=2", len("=2 alloc")}, // a "=2" at offset 0 is not the end of the search
		{"cuMemAlloc failed res=21", -1},
		{"cuMemAlloc failed res=2", len("cuMemAlloc failed")},
		{"cuMemFree failed res=2", -1},
		{" res=2 alloc res=2", -1}, // the first " res=2" has no allocation call before it
		{"alloc res=3 result=2", len("alloc res=3")},
	} {
		if got := cudaErrorTwo(tt.w); got != tt.want {
			t.Errorf("cudaErrorTwo(%q) = %d; want %d", tt.w, got, tt.want)
		}
	}
}

func TestStatusTwoAfter(t *testing.T) {
	for _, tt := range []struct {
		w    string
		want bool
	}{
		{"CUDA error 2", true},
		{"CUDA error:2", true},
		{"CUDA error(2)", true},
		{"CUDA error: (2) out of memory", true},
		{"CUDA error 2x", true},
		{"CUDA error 2, x", true},
		{"CUDA error2", false}, // at least one separator
		{"CUDA error ", false},
		{"CUDA error", false},
		{"CUDA error 21", false},
		{"CUDA error 2.1", false},
		{"CUDA error 3", false},
		{"CUDA error -2", false},
	} {
		if got := statusTwoAfter(tt.w, len("CUDA error")); got != tt.want {
			t.Errorf("statusTwoAfter(%q) = %v; want %v", tt.w, got, tt.want)
		}
	}
}

func TestHamiDevice(t *testing.T) {
	for _, tt := range []struct {
		w    string
		want int
	}{
		{"]: Device 2 OOM 1 / 2", 2},
		{"[HAMI-core ERROR (pid:25)]: Device 0 OOM 27147995136 / 25757220864", 0},
		{"]: Device 1048576 OOM 1 / 2", 1 << 20},
		{"]: Device 1048577 OOM 1 / 2", -1},
		{"]: Device 2 OOM", -1}, // " OOM " with its space
		{"]: Device 2 oom 1 / 2", -1},
		{"]: Device x OOM 1 / 2", -1},
		{"Device 2 OOM 1 / 2", -1},
		{"", -1},
	} {
		if got := hamiDevice(tt.w); got != tt.want {
			t.Errorf("hamiDevice(%q) = %d; want %d", tt.w, got, tt.want)
		}
	}
}

func TestIsTalkEdges(t *testing.T) {
	const phrase = "CUDA_ERROR_OUT_OF_MEMORY"
	pad := func(n int) string { return strings.Repeat("x", n) }
	for _, tt := range []struct {
		w    string
		i    int
		want bool
	}{
		{phrase + " means the device is full", 0, true}, // explained right after, at offset 0
		{phrase + " was returned", 0, false},
		{phrase, -1, false},
		{"avoid" + pad(59) + phrase, 64, true}, // the advice word starts 64 bytes before
		{"avoid" + pad(60) + phrase, 65, false},
		{"Avoid " + phrase, 6, true},
		{"likely " + phrase, 7, true},
		{"likely. " + phrase, 8, false}, // a hedge in an earlier sentence
		{"likely\n" + phrase, 7, false}, // or on an earlier line
		{"likely.5 " + phrase, 9, true}, // a decimal point ends no sentence
		{`x an "` + phrase + `" error`, 6, true},
		{`an ` + phrase, 3, false},
		{phrase + "\n means x", 0, false}, // " means" must follow the word on its line
		{phrase + " see ``x``", 0, true},
		{phrase + " " + pad(45) + "``", 0, true},
		{phrase + " " + pad(46) + "``", 0, false}, // past the 48 bytes after the word
	} {
		if got := isTalk(tt.w, tt.i); got != tt.want {
			t.Errorf("isTalk(%q, %d) = %v; want %v", tt.w, tt.i, got, tt.want)
		}
	}
}

func TestSentenceStart(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abc", 0},
		{"\nb", 1},
		{"a\nb", 2},
		{"a. b", 3},
		{"a! b", 3},
		{"a? b", 3},
		{"a.", 0},
		{"1.5 x", 0},
		{"a. b. c", 6},
		{"a. b\nc", 5},
	} {
		if got := sentenceStart(tt.s); got != tt.want {
			t.Errorf("sentenceStart(%q) = %d; want %d", tt.s, got, tt.want)
		}
	}
}

func TestQuotedNoun(t *testing.T) {
	for s, want := range map[string]bool{
		`failed with an "`: true, ` a “`: true, `x the '`: true, ` an \"`: true, `a “`: false,
		`x "`: false, `"`: false, `an `: false, `an"`: false, ``: false,
	} {
		if got := quotedNoun(s); got != want {
			t.Errorf("quotedNoun(%q) = %v; want %v", s, got, want)
		}
	}
}

package parse

import (
	"reflect"
	"testing"
)

// Edges of the CUDA, NCCL, XLA, CuPy and PyTorch cudaMallocAsync readers,
// on lines of testdata/oom/corpus/*.jsonl cut to start at their anchors.

func TestParseXLAEdges(t *testing.T) {
	r, ok := parseXLA("Failed to allocate request for 2.99GiB (3206250496B) on device ordinal 3")
	if !ok || r.RequestedBytes != 3206250496 || r.DeviceIndex != 3 {
		t.Errorf("request at offset 0: %v, %+v", ok, r)
	}
	r, ok = parseXLA("Out of memory while trying to allocate 58982400 bytes.\nBufferAssignment OOM Debugging.")
	if !ok || r.RequestedBytes != 58982400 {
		t.Errorf("out of memory at offset 0: %v, %+v", ok, r)
	}
}

func TestParseCuPyLegacyEdges(t *testing.T) {
	// libraries.jsonl CuPy <= 6: the pool held total − request.
	for _, tt := range []struct {
		text                string
		requested, reserved int64
	}{
		{"cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 12373894656 bytes)", 1073741824, 11300152832},
		{"out of memory to allocate 1073741824 bytes (total 12373894656 bytes)", 1073741824, 11300152832},
		{"out of memory to allocate 1073741824 bytes (total 1073741824 bytes)", 1073741824, 0}, // an empty pool
		{"out of memory to allocate 1073741824 bytes (total 1073741823 bytes)", 1073741824, -1},
	} {
		r, ok := parseCuPyLegacy(tt.text)
		if !ok || r.Framework != FrameworkCuPy || r.RequestedBytes != tt.requested || r.ReservedBytes != tt.reserved {
			t.Errorf("parseCuPyLegacy(%q) = %v, %+v; want requested %d, reserved %d", tt.text, ok, r, tt.requested, tt.reserved)
		}
	}
}

func TestParseOutOfMemoryAllocatingAtOffsetZero(t *testing.T) {
	r, ok := parseOutOfMemoryAllocating("Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).")
	if !ok || r.RequestedBytes != 25600000 || r.ReservedBytes != 3635267072 {
		t.Errorf("%v, %+v", ok, r)
	}
}

func TestParseNCCLAtOffsetZero(t *testing.T) {
	r, ok := parseNCCL("Cuda failure 'out of memory'")
	if !ok || r.Framework != FrameworkNCCL {
		t.Errorf("%v, %+v", ok, r)
	}
}

func TestCusparseInsufficient(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"insufficient resources when calling cusparseSpGEMM_workEstimation( handle, opA)", true}, // at offset 0
		{"RuntimeError: CUDA error: insufficient resources when calling cusparseSpGEMM_workEstimation(", true},
		{"insufficient resources when calling cusparse", true}, // shorter than the 16-byte cut
		{"insufficient resources when calling someOtherLibrary_cusparse", false},
		{"insufficient resources", false},
	} {
		if got := cusparseInsufficient(tt.text); got != tt.want {
			t.Errorf("cusparseInsufficient(%q) = %v; want %v", tt.text, got, tt.want)
		}
	}
}

func TestSizeAfterInt(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
		ok   bool
	}{
		{"GPU=0", 0, true},
		{"x GPU=3 y", 3, true},
		{"GPU=x", 0, false},
		{"no label", 0, false},
	} {
		got, ok := sizeAfterInt(tt.text, "GPU=")
		if got != tt.want || ok != tt.ok {
			t.Errorf("sizeAfterInt(%q) = %d, %v; want %d, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParsePyTorchMallocAsyncFields(t *testing.T) {
	// serving.jsonl's TGI warmup failure, the Generation(...) string unescaped.
	const msg = "Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : 16.08 GiB\nRequested               : 4.83 GiB\nDevice limit            : 22.20 GiB\nFree (according to CUDA): 11.12 MiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 22.20 GiB"
	want := newResult(FrameworkPyTorch)
	want.DeviceIndex = 0
	want.AllocatedBytes, want.RequestedBytes, want.TotalBytes = 17265768530, 5186173010, 23837068493
	want.FreeBytes, want.LimitBytes = 11660165, 23837068493
	if r, ok := parsePyTorchMallocAsync(msg); !ok || !reflect.DeepEqual(r, want) {
		t.Errorf("full message: %v, %+v", ok, r)
	}
	// From the anchor, which is then at offset 0: no device.
	want.DeviceIndex = -1
	if r, ok := parsePyTorchMallocAsync(msg[len("Allocation on device 0"):]); !ok || !reflect.DeepEqual(r, want) {
		t.Errorf("from the anchor: %v, %+v", ok, r)
	}
	for _, tt := range []struct {
		s    string
		want int64
	}{
		{"Requested               : 4.83 GiB", 5186173010},
		{"Requested\n  : 4.83 GiB", 5186173010},
		{"Requested   ", -1}, // whitespace to the end of the text
		{"Requested", -1},
		{"Requested 4.83 GiB", -1},
		{"nothing", -1},
	} {
		if got := colonSize(tt.s, "Requested"); got != tt.want {
			t.Errorf("colonSize(%q) = %d; want %d", tt.s, got, tt.want)
		}
	}
}

// CuPy's "allocated so far" is the pool's total before the request (reserved) in every
// version since v7; the async pool's placeholders (-1 at v9, SIZE_MAX printed from a size_t
// -1 on master) are no size. See parseOutOfMemoryAllocating for the cited source lines.
func TestCuPyAllocatedSoFar(t *testing.T) {
	const pre = "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,024 bytes "
	for _, tt := range []struct {
		tail            string
		reserved, limit int64
	}{
		{"(allocated so far: 3,635,267,072 bytes).", 3635267072, -1},
		{"(allocated so far: 536,870,912 bytes, limit set to: 1,073,741,824 bytes).", 536870912, 1073741824},
		{"(allocated so far: -1 bytes).", -1, -1},
		{"(allocated so far: 18,446,744,073,709,551,615 bytes).", -1, -1},
		{"(allocated so far: 18,446,744,073,709,551,615 bytes, limit set to: 1,073,741,824 bytes).", -1, -1},
		{"", -1, -1}, // master omits the suffix when total is the Python -1
	} {
		r, ok := Parse(pre + tt.tail)
		if !ok || r.Framework != FrameworkCuPy || r.RequestedBytes != 1024 || r.ReservedBytes != tt.reserved || r.LimitBytes != tt.limit || r.AllocatedBytes != -1 {
			t.Errorf("Parse(%q) = %v, %+v; want reserved %d, limit %d, allocated absent", tt.tail, ok, r, tt.reserved, tt.limit)
		}
	}
}

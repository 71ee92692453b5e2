package parse

import "testing"

// Edges of the TensorFlow readers. The message forms are those of
// testdata/oom/corpus/tensorflow.jsonl, cut to start at their anchors (a
// match at offset 0) or with one field changed to reach an edge.

func TestParseTFTensorFields(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		ok        bool
		device    int
		requested int64
	}{
		// "Simple allocator" names no GPU: the device comes from " on ".
		{"device_from_on", "OOM when allocating tensor with shape[114389,320] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator Simple allocator [[{{node EncoderDNN/EmbeddingLook", true, 0, 114389 * 320 * 4},
		{"device_1", "OOM when allocating tensor with shape[128,128,109,109] and type float on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc", true, 1, 128 * 128 * 109 * 109 * 4},
		{"cpu_device", "OOM when allocating tensor with shape[1,416,416,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu", false, 0, 0},
		// The same line with a host allocator on a GPU device: host memory.
		{"host_allocator", "OOM when allocating tensor with shape[1,416,416,3] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator cuda_host_bfc", false, 0, 0},
		{"zero_dim", "OOM when allocating tensor with shape[0,320] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", true, 0, 0},
		// 2^60 float elements are 2^62 bytes, the most taken.
		{"bytes_at_guard", "OOM when allocating tensor with shape[1073741824,1073741824] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", true, 0, 1 << 62},
		{"bytes_over_guard", "OOM when allocating tensor with shape[1073741824,1073741824] and type double on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", true, 0, -1},
	}
	for _, tt := range tests {
		r, ok := parseTFTensor(tt.text)
		if ok != tt.ok {
			t.Errorf("%s: ok %v; want %v", tt.name, ok, tt.ok)
			continue
		}
		if ok && (r.DeviceIndex != tt.device || r.RequestedBytes != tt.requested) {
			t.Errorf("%s: device %d, requested %d; want %d, %d", tt.name, r.DeviceIndex, r.RequestedBytes, tt.device, tt.requested)
		}
	}
}

func TestTFNodeDevice(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int
	}{
		{`_device="/job:localhost/replica:0/task:0/device:GPU:3"`, 3}, // at offset 0
		{`[[Node: x = Mul[T=DT_FLOAT, _device="/job:localhost/replica:0/task:0/gpu:1"](a, b)]]`, 1},
		{"no attribute here", -1},
		{"text ending at _device=", -1},
		// The value ends at its closing quote: a GPU named later is not its device.
		{`[[Node: x = Mul[_device="/job:localhost/replica:0/task:0/device:CPU:0"](a)]] on /device:GPU:2`, -1},
		{`[[Node: x = Mul[_device=""](a)]] on /device:GPU:2`, -1},
	} {
		if got := tfNodeDevice(tt.text); got != tt.want {
			t.Errorf("tfNodeDevice(%q) = %d; want %d", tt.text, got, tt.want)
		}
	}
}

func TestTensorElementsEdges(t *testing.T) {
	for _, tt := range []struct {
		line string
		want int64
		ok   bool
	}{
		{"[3,4]", 12, true}, // '[' at offset 0
		{"[]", 1, true},     // a scalar
		{"[4,1073741824,1073741824]", 1 << 62, true},
		{"[5,1073741824,1073741824]", 0, false},
		{"[0,1073741824,1073741824]", 0, true},
		{"[3,x]", 0, false},
		{"[3,4", 0, false},
		{"3,4", 0, false},
	} {
		got, ok := tensorElements(tt.line)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("tensorElements(%q) = %d, %v; want %d, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseTFBFCUnnamedEdges(t *testing.T) {
	// tensorflow.jsonl's TF 1.3 line, from its anchor.
	const line = "Ran out of memory trying to allocate 441.00MiB.  See logs for memory state."
	r, ok := parseTFBFCUnnamed(line)
	if !ok || r.RequestedBytes != 441<<20 {
		t.Errorf("at offset 0: %v, %d", ok, r.RequestedBytes)
	}
	r, ok = parseTFBFCUnnamed("W tensorflow/core/common_runtime/bfc_allocator.cc:275] " + line)
	if !ok || r.RequestedBytes != 441<<20 || r.Framework != FrameworkTensorFlow {
		t.Errorf("with its prefix: %v, %+v", ok, r)
	}
	if _, ok := parseTFBFCUnnamed("Ran out of memory trying to allocate **441.00MiB** (pinned host memory)"); ok {
		t.Error("host named after the size was taken as a device failure")
	}
	if _, ok := parseTFBFCUnnamed("Ran out of memory trying to allocate 441.00MiB." + spaces(54) + "host"); !ok {
		t.Error("host more than 64 bytes after the anchor's end ruled the line out")
	}
	if _, ok := parseTFBFCUnnamed("host" + spaces(252) + line); ok {
		t.Error("host 256 bytes before the anchor was missed")
	}
	if _, ok := parseTFBFCUnnamed("host" + spaces(253) + line); !ok {
		t.Error("host more than 256 bytes before the anchor ruled the line out")
	}
	if got := emphasis("**", 0); got != 2 {
		t.Errorf("emphasis to the end = %d", got)
	}
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}

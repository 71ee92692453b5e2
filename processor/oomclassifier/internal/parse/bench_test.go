package parse

import (
	"strings"
	"testing"
)

var sink Result

func benchParse(b *testing.B, text string, wantOK bool) {
	b.Helper()
	if _, ok := Parse(text); ok != wantOK {
		b.Fatalf("Parse ok = %v, want %v", ok, wantOK)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	clock := startCPUClock(b)
	for b.Loop() {
		sink, _ = Parse(text)
	}
	clock.report(b)
}

// A typical 100–200 byte application log line.
func BenchmarkParseNonOOM(b *testing.B) {
	benchParse(b, `2024-05-01T10:00:00.123Z INFO  [trainer] epoch=3 step=12000 loss=0.2531 lr=3.0e-04 grad_norm=1.02 tokens_per_s=48213 elapsed=1h02m`, false)
}

// A 4 KiB line (a JSON request dump) with no OOM trigger.
func BenchmarkParseNonOOMLong(b *testing.B) {
	line := `{"level":"info","msg":"request","body":"` + strings.Repeat("the quick brown fox jumps over the lazy dog ", 4096/44) + `"}`
	benchParse(b, line[:4096], false)
}

// A line that passes the prefilter ("memory") but is no OOM: the cost of the
// full recogniser chain on a near miss.
func BenchmarkParseNonOOMMemoryWord(b *testing.B) {
	benchParse(b, `2024-05-01T10:00:00.123Z INFO  [trainer] step=12000 GPU memory allocated=12.3 GiB reserved=14.0 GiB peak=15.2 GiB`, false)
}

func BenchmarkParsePyTorch2(b *testing.B) {
	benchParse(b, pytorch2Message, true)
}

func BenchmarkParseTF(b *testing.B) {
	benchParse(b, `tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:RandomStandardNormal]`, true)
}

func BenchmarkParseTFBFC(b *testing.B) {
	benchParse(b, `2023-05-02 11:22:33.444444: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.17GiB (rounded to 1258291200)requested by op Conv2D`, true)
}

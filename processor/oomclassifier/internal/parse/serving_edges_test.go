package parse

import (
	"strings"
	"testing"
)

// Edges of the llama.cpp / ggml reader. The lines are those of
// testdata/oom/corpus/serving.jsonl, cut to start at a label (a match at
// offset 0) or relayed without the line before.

func TestParseGGMLEdges(t *testing.T) {
	const (
		alloc  = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory"
		buffer = "ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 10345253120"
	)
	tests := []struct {
		name      string
		text      string
		requested int64
		device    int
	}{
		// Both lines: the graph allocator's exact bytes win over the MiB line's
		// rounding of the same request.
		{"both_lines", alloc + "\n" + buffer, 10345253120, 1},
		{"allocating_at_offset_0", alloc[strings.Index(alloc, "allocating "):], 9866 << 20, 1},
		// Ollama's relay keeps "cudaMalloc failed: out of memory" and the graph allocator's line.
		{"relay_at_offset_0", "cudaMalloc failed: out of memory\n" + buffer, 10345253120, 1},
	}
	for _, tt := range tests {
		r, ok := parseGGML(tt.text)
		if !ok || r.Framework != FrameworkLlamaCpp || r.RequestedBytes != tt.requested || r.DeviceIndex != tt.device {
			t.Errorf("%s: %v, %+v; want requested %d on %d", tt.name, ok, r, tt.requested, tt.device)
		}
	}
}

func TestParseGGMLCurrentDeviceWindow(t *testing.T) {
	// ggml_cuda_error's "current device: <d>" is read within 256 bytes of
	// "CUDA error: out of memory" (which is not at offset 0 here).
	const pre, oom, dev = "ggml_cuda_compute_forward: ", "CUDA error: out of memory\n", "current device: 3, in function ggml_cuda_op_mul_mat at ggml-cuda.cu:1"
	for _, tt := range []struct {
		gap  int
		want int
	}{
		{0, 3},
		{255 - len(oom), 3},
		{256 - len(oom), -1},
	} {
		r, ok := parseGGML(pre + oom + strings.Repeat(".", tt.gap) + dev)
		if !ok || r.DeviceIndex != tt.want {
			t.Errorf("device label %d bytes after: %v, device %d; want %d", len(oom)+tt.gap, ok, r.DeviceIndex, tt.want)
		}
	}
}

func TestGPUBufferName(t *testing.T) {
	for _, tt := range []struct {
		name string
		want int
		ok   bool
	}{
		{"CUDA0", 0, true},
		{"ROCm1", 1, true},
		{"CUDA1048576", 1 << 20, true},
		{"CUDA1048577", -1, false},
		{"CUDA_Host", -1, false},
		{"CPU", -1, false},
		{"CUDA0x", -1, false},
	} {
		got, ok := gpuBufferName(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("gpuBufferName(%q) = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

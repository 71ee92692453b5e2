package parse

import (
	"strings"
	"testing"
)

// Each structure rule turns down a text that only talks about an OOM, and
// keeps the same failure when it is reported: the pairs differ only in the
// structure around the same words.
func TestStructureRules(t *testing.T) {
	for _, tt := range []struct{ rule, talk, report string }{
		{"markdown heading", "## CUDA Out of Memory\nTune --mem-fraction-static.", "CUDA out of memory. Tried to allocate 2.00 MiB"},
		{"heading of a pasted message is kept", "## CUDA Out of Memory", "# RuntimeError: CUDA out of memory. Tried to allocate 1.78 GiB (GPU 0; 4.00 GiB total capacity; 7.42 GiB already allocated;"},
		{"rst heading", "Out of memory on the GPU\n------------------------\n", "RuntimeError: CUDA error: out of memory"},
		{"prose list item", "- I get `CUDA out of memory` errors", "- RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB"},
		{"prose list item behind a wrapper", "[rank3]: - update the lib to catch RuntimeError: CUDA error: out of memory", "[rank3]: RuntimeError: CUDA error: out of memory"},
		{"ComfyUI's exception field is a report", "- see HIP out of memory above", "- **Exception Message:** HIP out of memory. Tried to allocate 6.46 GiB."},
		{"code span", "they are kicked out with `out of memory` on gpu nodes", "they were killed: CUDA error: out of memory"},
		{"except clause", "        except torch.cuda.OutOfMemoryError:\n            pass", "torch.cuda.OutOfMemoryError: CUDA out of memory."},
		{"isinstance", "    isinstance(exception, torch.cuda.OutOfMemoryError)", "torch.OutOfMemoryError: CUDA out of memory."},
		{"tested literal", `            if "CUDA out of memory" in str(e):`, `RuntimeError: CUDA out of memory`},
		{"regex alternation", `OOM = re.compile(r"CUDA out of memory|CUDA error: out of memory")`, `RuntimeError: CUDA error: out of memory`},
		{"conditional", "If you see CUDA error: out of memory, lower the batch size.", "RuntimeError: CUDA error: out of memory"},
		{"explanation", "This error means you ran out of memory on your GPU.", "RuntimeError: CUDA error: out of memory on your GPU"},
		{"narration", "Running out of memory (OOM) during initialization wastes GPU time.", "F tensorflow/core/common_runtime/gpu/gpu_device.cc:103] EigenAllocator for GPU ran out of memory when allocating 0."},
		{"class of errors", "More hints on what to do with CUDA Out of memory errors", "Out of memory error on GPU 0. Cannot allocate 1.5GB memory on GPU 0"},
		{"slurm", "srun: error: gpu001: task 0: Out Of Memory", "gpu001: RuntimeError: CUDA error: out of memory"},
		{"kernel syslog", "Nov 05 21:14:12 paigcr-a-gpu-1037 kernel: Memory cgroup out of memory: Kill process 19302 (java)", "Nov 05 21:14:12 paigcr-a-gpu-1037 python[1]: RuntimeError: CUDA error: out of memory"},
		{"dmesg", "[ 7063.247407] Memory cgroup out of memory: Killed process 63214 (uwsgi) on gpu node", "[2026-02-24T20:21:58Z] RuntimeError: CUDA error: out of memory"},
		{"node field", "job=7 node=gpu-a100-3 state=out of memory", "job=7 node=gpu-a100-3 state=CUDA error: out of memory"},
	} {
		if r, ok := Parse(tt.talk); ok {
			t.Errorf("%s: %q recognised as %s/%s", tt.rule, tt.talk, r.Framework, r.DeviceKind)
		}
		if _, ok := Parse(tt.report); !ok {
			t.Errorf("%s: the report %q not recognised", tt.rule, tt.report)
		}
	}
}

// The record's own host.name never counts as device context.
func TestParseOnHost(t *testing.T) {
	const line = "gpu-node-7 watchdog: out of memory, restarting the exporter"
	if _, ok := ParseOnHost(line, "gpu-node-7"); ok {
		t.Error("the host's name counted as device context")
	}
	if _, ok := ParseOnHost("gpu-node-7: RuntimeError: CUDA error: out of memory", "gpu-node-7"); !ok {
		t.Error("a CUDA error on that host not recognised")
	}
	if _, ok := ParseOnHost(line, "ab"); !ok {
		t.Error("without its host.name the line reads as before") // the guard: 'gpu' from the text counts
	}
}

// Pinned host memory: device kind host, the size where stated, never a GPU
// kind; a device OOM beside a pinned warning stays the device's.
func TestPinnedHost(t *testing.T) {
	for text, want := range map[string]int64{
		"FATAL server failed during startup | cudaMallocHost failed: cudaErrorMemoryAllocation: out of memory":          -1,
		"E cuda_driver.cc:802] failed to alloc 782758144 bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory":        782758144,
		"W device_host_allocator.h:46] could not allocate pinned host memory of size: 34359738368":                      34359738368,
		"ggml_cuda_host_malloc: failed to allocate 1900.00 MiB of pinned memory: out of memory":                         1992294400,
		"ggml_cuda_host_malloc: failed to allocate 1900,00 MiB of pinned memory: out of memory":                         -1, // decimal comma or grouping: not stated
		"hipHostMalloc failed: hipErrorOutOfMemory":                                                                     -1,
		"ggml_gallocr_reserve_n: failed to allocate CUDA_Host buffer of size 1073741824":                                1073741824,
		"opencv/modules/core/src/cuda_host_mem.cpp:95: error: (-217:Gpu API call) out of memory in function 'allocate'": -1,
	} {
		r, ok := Parse(text)
		if !ok || r.DeviceKind != DeviceHost || r.RequestedBytes != want {
			t.Errorf("%q: ok %v, kind %q, requested %d; want host, %d", text, ok, r.DeviceKind, r.RequestedBytes, want)
		}
		if !NonNVIDIA(r.DeviceKind) {
			t.Errorf("%q: host kind matchable to an NVIDIA GPU", text)
		}
	}
	// A pinned API named on one line and a device failure on another,
	// behind an empty first line: the device's.
	if r, ok := Parse("\ncudaMallocHost returned a buffer\nRuntimeError: CUDA error: out of memory"); !ok || r.DeviceKind != DeviceCUDA {
		t.Errorf("pinned API beside a device OOM: ok %v, %+v", ok, r)
	}
	device := "ggml_cuda_host_malloc: failed to allocate 512.00 MiB of pinned memory: out of memory\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory"
	if r, ok := Parse(device); !ok || r.DeviceKind != DeviceCUDA || r.DeviceIndex != 1 {
		t.Errorf("device OOM beside a pinned warning: ok %v, %+v", ok, r)
	}
}

func TestStructureHelpers(t *testing.T) {
	for line, want := range map[string]bool{
		"[ 7063.247407] x": true, "[Fri Sep 16 10:37:38 2022] x": true, "[19:45:05] x": false,
		"[2026-02-24T20:21:58Z] x": false, "[09/04/2023-22:30:21] [TRT]": false, "[]": false, "[ ] x": false,
	} {
		if got := dmesgPrefix(line); got != want {
			t.Errorf("dmesgPrefix(%q) = %v", line, got)
		}
	}
	for item, want := range map[string]bool{
		"RuntimeError: x": true, "Free memory: 8126464": true, "**Exception Message:** x": true,
		"Error message \"RuntimeError: x\"": false, "update lib to catch RuntimeError: x": false, "I get": false, ":x": false,
	} {
		if got := frameStart(item); got != want {
			t.Errorf("frameStart(%q) = %v", item, got)
		}
	}
	for lit, want := range map[string]bool{"a|b": true, "(CUDA|HIP)": true, "a || b": false, "99%|x|": false, "|a": false} {
		if got := alternation(lit); got != want {
			t.Errorf("alternation(%q) = %v", lit, got)
		}
	}
	if got, _ := reportText("x\n`out of memory` y", ""); got != "x\n`             ` y" {
		t.Errorf("code span: %q", got)
	}
	if got, changed := reportText("plain text without marks", ""); changed || got != "plain text without marks" {
		t.Errorf("unmarked text changed: %q", got)
	}
	at, n := starts(strings.Repeat("] ", 40))
	if n != len(at) {
		t.Errorf("starts: %d starts, want the cap %d", n, len(at))
	}
}

// FuzzReportText: blanking only turns bytes into spaces (host names into
// '_'), keeps every line break and the length, and is idempotent (what it
// blanks leaves no new markup behind).
func FuzzReportText(f *testing.F) {
	for _, c := range loadCited(f) {
		f.Add(c.Text, "")
	}
	f.Add("srun: error: gpu001: task 0: Out Of Memory", "gpu001")
	f.Add("- If it runs out of device memory\n## CUDA out of memory\n`out of memory`", "")
	f.Add("node=gpu1 host=gpu2 out of memory", "gpu1")
	f.Fuzz(func(t *testing.T, text, host string) {
		b, changed := reportText(text, host)
		if len(b) != len(text) {
			t.Fatalf("length %d, want %d", len(b), len(text))
		}
		for k := 0; k < len(text); k++ {
			if b[k] != text[k] && (b[k] != ' ' && b[k] != '_' || text[k] == '\n' || text[k] == '\r') {
				t.Fatalf("byte %d changed from %q to %q", k, text[k], b[k])
			}
		}
		if !changed && b != text {
			t.Fatal("changed without saying so")
		}
		if again, _ := reportText(b, host); again != b {
			t.Fatalf("not idempotent:\n%q\n%q", b, again)
		}
	})
}

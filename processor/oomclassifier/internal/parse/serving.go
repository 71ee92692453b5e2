package parse

import "strings"

// gpuBufferName parses a ggml device buffer type name, "CUDA<d>" or
// "ROCm<d>", to its ordinal. Host buffers ("CUDA_Host", "CPU") fail.
func gpuBufferName(name string) (int, bool) {
	for _, p := range [...]string{"CUDA", "ROCm"} {
		if strings.HasPrefix(name, p) {
			if v, e, ok := intAt(name, len(p)); ok && e == len(name) && v <= 1<<20 {
				return int(v), true
			}
		}
	}
	return -1, false
}

// parseGGML reads llama.cpp / ggml device allocation failures:
//
//	ggml_backend_cuda_buffer_type_alloc_buffer: allocating <h> MiB on device <d>: cudaMalloc failed: out of memory
//	ggml_gallocr_reserve_n: failed to allocate CUDA<d> buffer of size <n>
//	llama_model_load: error loading model: … unable to allocate CUDA<d> buffer
//	CUDA error: out of memory \n current device: <d>, in function ggml_cuda_…
//
// Meanings, from the format strings: ggml/src/ggml-cuda/ggml-cuda.cu
// ggml_backend_cuda_buffer_type_alloc_buffer prints "%s: allocating %.2f MiB
// on device %d: cudaMalloc failed: %s" with size / 1024.0 / 1024.0 (the
// requested buffer, MiB = 1024²) and the buffer type's device ordinal;
// ggml-alloc.c ggml_gallocr_reserve_n prints "%s: failed to allocate %s
// buffer of size %zu" with the buffer type's name (CUDA<d>: device d) and the
// exact bytes requested; ggml_cuda_error prints "current device: %d", the
// device current when the call failed.
//
// Pinned host failures (ggml_cuda_host_malloc's "failed to allocate … MB of
// pinned memory", "CUDA_Host" buffers) are host memory and not recognised.
func parseGGML(text string) (Result, bool) {
	if i := strings.Index(text, "Malloc failed: out of memory"); i >= 4 && text[i-4:i] == "cuda" {
		i -= 4
		r := newResult(FrameworkLlamaCpp)
		lo := max(0, i-160)
		if a := strings.LastIndex(text[lo:i], "allocating "); a >= 0 {
			s := text[lo+a+len("allocating ") : i]
			if v, p, ok := sizeAt(s, 0); ok {
				r.RequestedBytes = v
				if strings.HasPrefix(s[p:], " on device ") {
					r.DeviceIndex = deviceAfter(s, p+len(" on device "))
				}
			}
		}
		// A relay (Ollama's "llama runner process has terminated: cudaMalloc
		// failed: out of memory") may keep only the line that follows, the
		// graph allocator's, which states the buffer and its device.
		//
		// When both lines are there, the graph allocator's exact byte count
		// wins over the "%.2f MiB" rounding of the same request (they agree
		// to within the rounding, 0.005 MiB, on the same device).
		if b, ok := ggmlBuffer(text, "failed to allocate ", " buffer of size "); ok {
			switch {
			case r.RequestedBytes < 0:
				r.RequestedBytes, r.DeviceIndex = b.RequestedBytes, b.DeviceIndex
			case (r.DeviceIndex < 0 || b.DeviceIndex < 0 || r.DeviceIndex == b.DeviceIndex) &&
				b.RequestedBytes >= 0 && absDiff(b.RequestedBytes, r.RequestedBytes) <= 5243:
				r.RequestedBytes = b.RequestedBytes
			}
		}
		return r, true
	}
	if r, ok := ggmlBuffer(text, "failed to allocate ", " buffer of size "); ok {
		return r, true
	}
	if r, ok := ggmlBuffer(text, "unable to allocate ", " buffer"); ok {
		return r, true
	}
	if i := strings.Index(text, "CUDA error: out of memory"); i >= 0 && strings.Contains(text, "ggml") {
		r := newResult(FrameworkLlamaCpp)
		if j := indexFrom(text, "current device: ", i); j >= 0 && j-i < 256 {
			r.DeviceIndex = deviceAfter(text, j+len("current device: "))
		}
		return r, true
	}
	return absent, false
}

// ggmlBuffer finds "<verb><name><suffix>[<n>]" with a GPU buffer name. It
// anchors on the device word (CUDA, ROCm) and checks the verb before it.
func ggmlBuffer(text, verb, suffix string) (Result, bool) {
	if !allocatesGPUBuffer(text) {
		return absent, false
	}
	for from := 0; ; {
		i := indexFrom(text, verb, from)
		if i < 0 {
			return absent, false
		}
		from = i + len(verb)
		w := window(text, from)
		// The name is at most 32 bytes: search no further, or a body of
		// repeated verbs costs a window per occurrence.
		end := strings.Index(w[:min(len(w), 32+len(suffix))], suffix)
		if end <= 0 || end > 32 {
			continue
		}
		dev, ok := gpuBufferName(w[:end])
		if !ok {
			continue
		}
		r := newResult(FrameworkLlamaCpp)
		r.DeviceIndex = dev
		if suffix == " buffer of size " {
			if n, _, ok := intAt(w, end+len(suffix)); ok {
				r.RequestedBytes = n
			}
		}
		return r, true
	}
}

// parseVLLM reads vLLM's own memory failures (vllm/worker, vllm/v1/worker):
//
//	No available memory for the cache blocks. Try increasing `gpu_memory_utilization` …
//	Free memory on device[ cuda:<d>] (<F>/<T> GiB) on startup is less than desired GPU memory utilization (<u>, <L> GiB). …
//
// The second is the startup check that the requested share of the device is
// free (vllm/v1/worker/gpu_worker.py init_device, 0.8+): F and T are
// torch.cuda.mem_get_info()'s free and total at start, divided by GiB_bytes
// = 1024³ (the unit is printed once, after T); u is gpu_memory_utilization
// and L = requested_memory = T × u in GiB, reported as LimitBytes.
func parseVLLM(text string) (Result, bool) {
	if strings.Contains(text, "No available memory for the cache blocks") {
		r := newResult(FrameworkVLLM)
		r.Stack = FrameworkVLLM
		return r, true
	}
	const free = "Free memory on device"
	i := strings.Index(text, free)
	if i < 0 {
		return absent, false
	}
	w := window(text, i+len(free))
	const less = " on startup is less than desired GPU memory utilization ("
	k := strings.Index(w, less)
	if k < 0 || k > 64 {
		return absent, false
	}
	r := newResult(FrameworkVLLM)
	r.Stack = FrameworkVLLM
	head := w[:k]
	if j := strings.Index(head, "cuda:"); j >= 0 {
		r.DeviceIndex = deviceAfter(head, j+len("cuda:"))
	}
	if o := strings.IndexByte(head, '('); o >= 0 && strings.HasSuffix(head, ")") {
		pair := head[o+1 : len(head)-1] // "<F>/<T> GiB": the unit follows the second number only
		if slash := strings.IndexByte(pair, '/'); slash > 0 {
			if t, e, ok := sizeAt(pair, slash+1); ok && e == len(pair) {
				r.TotalBytes = t
				unit := strings.TrimSpace(pair[numberEnd(pair, slash+1):])
				if mult, ok := unitMultiplier(unit); ok {
					if f, ok := decimalBytes(pair[:slash], mult); ok {
						r.FreeBytes = f
					}
				}
			}
		}
	}
	u := w[k+len(less):]
	if c := strings.Index(u, ", "); c >= 0 && c < 16 {
		if l, _, ok := sizeAt(u, c+2); ok {
			r.LimitBytes = l
		}
	}
	return r, true
}

// parseTGI reads text-generation-inference's warmup failure, raised when the
// CUDA OOM during warmup is caught
// (server/text_generation_server/models/flash_causal_lm.py warmup):
//
//	Not enough memory to handle <n> prefill tokens. You need to decrease `--max-batch-prefill-tokens`
//
// <n> is a token count (len(batch.input_ids)), not bytes: nothing is read.
func parseTGI(text string) (Result, bool) {
	const anchor = "Not enough memory to handle "
	i := strings.Index(text, anchor)
	if i < 0 {
		return absent, false
	}
	_, e, ok := intAt(text, i+len(anchor))
	if !ok {
		return absent, false
	}
	line := window(text, e)
	if nl := strings.IndexByte(line, '\n'); nl >= 0 {
		line = line[:nl]
	}
	if !strings.Contains(line, "tokens") {
		return absent, false
	}
	r := newResult(FrameworkTGI)
	r.Stack = FrameworkTGI
	return r, true
}

// absDiff is |a-b| for byte counts.
func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

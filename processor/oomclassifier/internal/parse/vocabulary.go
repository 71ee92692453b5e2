package parse

import "strings"

// The vocabulary recogniser is the last one tried: it knows no template, only
// the words libraries use to say a device allocation failed, the contexts in
// which those words mean something else, and the labels in front of the
// numbers. It is what recognises a known message inside an unknown wrapper
// (another language's exception, a launcher's log prefix) and the libraries
// whose messages state little (MXNet, RMM, TensorRT, Julia's CUDA.jl, …).
//
// Sources of the wordings (format strings at the cited places):
//   - PaddlePaddle paddle/fluid/memory/allocation/cuda_allocator.cc: "Out of
//     memory error on GPU %d. Cannot allocate %s memory on GPU %d, %s memory
//     has been allocated and available memory is only %s." The first size is
//     the request, the last the device's free memory (cudaMemGetInfo); the
//     middle one is Paddle's own total on that GPU, which is not the corpus's
//     "allocated by live tensors" and is not read. Sizes are string::HumanReadableSize,
//     powers of 1024 ("MB" meaning MiB). Paddle 1.x gpu_info.cc: "enforce
//     allocating <= available failed, <request> > <available>" (bytes).
//   - TensorRT (nvinfer1 DefaultAllocator, virtualMemoryBuffer): "Cuda Error in
//     allocate: 2 (out of memory)", "Error Code 1: Cuda Runtime (out of
//     memory)", "Error Code 2: OutOfMemory (Requested size was <n> bytes.)",
//     "Requested amount of [GPU ]memory (<n> bytes) could not be allocated",
//     "User allocator error allocating <n>-byte buffer".
//   - ONNX Runtime onnxruntime/core/framework/bfc_arena.cc: "Failed to allocate
//     memory for requested buffer of size <n>". The arena serves the CPU
//     execution provider too; NCHWc nodes exist only there.
//   - RMM rmm/mr/device/*_memory_resource.hpp: "std::bad_alloc: out_of_memory:
//     …" and the pool's "Maximum pool size exceeded".
//   - MXNet src/storage/pooled_storage_manager.h: "cudaMalloc retry failed: out of memory".
//   - CUDA.jl lib/cudadrv: "Out of GPU memory".
//   - torch_memory_saver (SGLang): "CUresult error  result=2": CUresult 2 is
//     CUDA_ERROR_OUT_OF_MEMORY in cuda.h.
//   - SGLang model_runner: "Not enough memory. Please try to increase --mem-fraction-static."
//   - Thrust (thrust/system/cuda/detail/*.h): cuda_cub::throw_on_error(status,
//     "parallel_for failed") throws system_error "parallel_for failed: <cudaGetErrorString>";
//     device malloc failures throw thrust::system::detail::bad_alloc, whose
//     what() is "std::bad_alloc: " + cudaGetErrorString ("out of memory").
//   - mallocMC (the device-side heap of PIConGPU/alpaka): "mallocMC out of memory".
//   - ND4J (deeplearning4j CUDA backend, CudaZeroHandler): "Can't allocate
//     [DEVICE] allocation buffer memory!", "Out of [DEVICE] memory, host memory
//     will be used instead: deviceId: [<d>], requested bytes: [<n>]": the
//     device ordinal and the failed request in bytes.
//   - The TPU runtime under JAX (libtpu, whose source is not public; wording
//     from the cited JAX issues): "Error allocating device buffer: Attempting
//     to allocate <h>. That was not possible. There are <h> free.": the
//     request and the HBM free, in XLA's K/M/G short form, read as powers of
//     1024 like every other XLA size.
//   - Theano's CUDA backend (theano/sandbox/cuda/cuda_ndarray.cu device_malloc):
//     "Error allocating %llu bytes of device memory (%s). Driver report %llu
//     bytes free and %llu bytes total": the request, then cudaMemGetInfo's
//     free and total, all plain bytes.
//   - TensorFlow custom ops' own device allocators, e.g. "GPU memory
//     allocation failed (might be due to insufficient memory)".

// allocPhrases say that an allocation failed; each also needs a GPU context.
var allocPhrases = [...]string{
	"out of memory", "Out of memory", "OUT OF MEMORY", "out_of_memory", "Out of GPU memory",
	"OutOfMemory", "Maximum pool size exceeded", "Failed to allocate memory for requested buffer",
	"could not be allocated", "allocator error allocating", "enforce allocating <= available failed",
	"Not enough memory. Please try to increase --mem-fraction-static",
	"Ran out of memory in memory space", "Error allocating device buffer", "Out of [DEVICE] memory",
	"Dst tensor is not initialized", "failed to allocate memory", "memory allocation failed",
	"allocate [DEVICE]", "bad_alloc: out of memory",
	// wgpu 0.19's create_buffer failure, ggml Metal's per-buffer
	// maximum, the TPU runtime's "Attempting to reserve … That was not possible".
	"Not enough memory left", "is larger than buffer maximum", "That was not possible",
}

// lowerPhrases are allocation phrases matched in any letter case (issue
// titles and chat pastes lower-case everything), with a lower-case GPU word.
var lowerPhrases = [...]string{"oom when allocating", "_status_alloc_failed", "out of memory"}

// gpuWords place the failure on an accelerator.
var gpuWords = [...]string{
	"CUDA", "cuda", "Cuda", "GPU", "gpu", "Gpu", "HIP", "hip", "NCCL", "nvinfer", "TensorRT", "TRT",
	"cuMem", "CUresult", "rmm", "RMM", "bfc_arena", "BFCArena", "mem-fraction-static", "device", "DEVICE",
	"defaultAllocator", "virtualMemoryBuffer", "TPU", "ResourceExhausted", "Dst tensor",
	"thrust::", "parallel_for failed", "mallocMC",
	// Other accelerators and APIs: the device kind comes from device.go.
	"MPS", "DML", "XPU", "NPU", "Vulkan", "Metal", "HBM", "tpu_", "wgpu", "ggml_",
}

// lowerGPUWords are gpuWords matched on lower-cased text.
var lowerGPUWords = [...]string{"cuda", "gpu", "cudnn", "cublas"}

// negativeContexts turn allocation words into something that is not a GPU
// allocation failure: host memory, the kernel's OOM killer, a JVM heap.
var negativeContexts = [...]string{
	"bytes on host", "pinned host memory", "from HOST memory", "CPU Memory", "DefaultCPUAllocator",
	"_nchwc", "Killed process", "oom-kill", "oom_kill", "memory cgroup", "Java heap", "OOMKilled",
	"pinned memory", "system memory",
	// Anchors a template above owns: when the template turned the text down
	// (a host BFC allocator, a retry warning, a CPU tensor, a host ggml
	// buffer), the generic words in it must not bring it back.
	"ran out of memory trying to allocate", "OOM when allocating tensor", "_Host buffer", "CPU buffer",
	// OpenCV's cv::cuda::HostMem (cuda_host_mem.cpp, cudaHostAlloc) and
	// spark-rapids' CpuSplitAndRetryOOM: host memory.
	"host_mem", "CPU OutOfMemory",
}

// isNegative reports a context that makes the generic words mean host memory.
func isNegative(text string) bool {
	return containsAny(text, negativeContexts[:]...)
}

// parseVocabulary recognises an allocation-failure phrase in a GPU context
// that no template above claimed, and reads what numbers it can.
func parseVocabulary(text string) (Result, bool) {
	// The phrases first: most texts that reach this last recogniser hold
	// none, and the negative contexts are the longer list.
	if !(containsAny(text, allocPhrases[:]...) && containsAny(text, gpuWords[:]...)) && !cuResultOOM(text) && !lowerCaseOOM(text) {
		return absent, false
	}
	if isNegative(text) || isTalk(text, firstIndex(text, allocPhrases[:])) {
		return absent, false
	}
	r := newResult(frameworkFromContext(text))
	readLabelledSizes(text, &r)
	r.DeviceIndex = deviceFromText(text)
	return r, true
}

// lowerCaseOOM matches lowerPhrases and lowerGPUWords on the lower-cased text
// (its first windowLen bytes).
func lowerCaseOOM(text string) bool {
	w := window(text, 0)
	return containsAnyFold(w, lowerPhrases[:]) && containsAnyFold(w, lowerGPUWords[:])
}

// firstIndex is the smallest index of any of words in text; -1 when none.
func firstIndex(text string, words []string) int {
	first := -1
	for _, w := range words {
		if i := strings.Index(text, w); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// containsAnyFold is containsAny ignoring ASCII case, without allocating.
func containsAnyFold(text string, words []string) bool {
	for _, w := range words {
		if containsFold(text, w) {
			return true
		}
	}
	return false
}

// cuResultOOM reports torch_memory_saver's "CUresult error  result=2 ". The
// wrapper prefixes each line with its source file, "[torch_memory_saver.cpp]":
// the "memory" in it is what the prefilter passes the line on, so the same
// words without it (which the prefilter drops) are not recognised either.
func cuResultOOM(text string) bool {
	i := strings.Index(text, "CUresult error")
	if i < 0 || !containsFold(text, "memory") {
		return false
	}
	w := window(text, i)
	if len(w) > 40 {
		w = w[:40]
	}
	return strings.Contains(w, "result=2 ")
}

// contextFrameworks name the library from words around the message, first match wins.
var contextFrameworks = [...]struct{ word, framework string }{
	// Wrappers and APIs whose words are specific (before the
	// generic library names below: a ggml Metal line is llama.cpp's).
	{"HAMI-core", FrameworkHAMi}, {"spark.rapids", FrameworkSparkRapids}, {"ggml_", FrameworkLlamaCpp},
	{"MPS backend", FrameworkPyTorch}, {"EL0004", FrameworkCANN}, {"rtMalloc", FrameworkCANN},
	{"torch_directml", FrameworkDirectML}, {"DML allocator", FrameworkDirectML}, {"GPU video memory", FrameworkDirectML},
	{"wgpu", FrameworkWGPU}, {"Vulkan", FrameworkVulkan}, {"VK_ERROR", FrameworkVulkan}, {"vk::", FrameworkVulkan},
	{"OutOfDeviceMemory", FrameworkVulkan}, {"kIOGPU", FrameworkMetal}, {"Gpu API call", FrameworkOpenCV},
	{"cycles", FrameworkBlender}, {"Cycles", FrameworkBlender},
	{"Paddle", FrameworkPaddle}, {"paddle", FrameworkPaddle},
	{"TensorRT", FrameworkTensorRT}, {"nvinfer", FrameworkTensorRT}, {"[TRT]", FrameworkTensorRT},
	{"defaultAllocator.cpp", FrameworkTensorRT}, {"virtualMemoryBuffer", FrameworkTensorRT}, {"rtSafe", FrameworkTensorRT},
	{"onnxruntime", FrameworkONNXRuntime}, {"onnx runtime", FrameworkONNXRuntime},
	{"MXNet", FrameworkMXNet}, {"mxnet", FrameworkMXNet},
	{"rmm", FrameworkRMM}, {"RMM", FrameworkRMM},
	{"CUDA.jl", FrameworkJulia}, {".jl:", FrameworkJulia},
	{"mem-fraction-static", FrameworkSGLang}, {"torch_memory_saver", FrameworkSGLang}, {"sglang", FrameworkSGLang},
	{"cupy", FrameworkCuPy}, {"chainer", FrameworkCuPy},
	{"torch_xla", FrameworkPyTorch}, {"XLA:TPU", FrameworkJAX}, {"XlaRuntimeError", FrameworkJAX},
	{"nd4j", FrameworkJava}, {"CudaZeroHandler", FrameworkJava},
	{"tensorflow", FrameworkTensorFlow}, {"Tensorflow", FrameworkTensorFlow}, {"ResourceExhaustedError", FrameworkTensorFlow},
	{"Dst tensor is not initialized", FrameworkTensorFlow}, {"RESOURCE_EXHAUSTED", FrameworkJAX}, {"cudnn", FrameworkCuDNN}, {"cublas", FrameworkCuBLAS},
}

func frameworkFromContext(text string) string {
	for _, c := range contextFrameworks {
		if strings.Contains(text, c.word) {
			return c.framework
		}
	}
	if strings.Contains(text, "Out of GPU memory") {
		return FrameworkJulia // CUDA.jl's wording; the stack trace is often cut off
	}
	return FrameworkCUDA
}

// requestLabels precede the failed request's size, most specific first.
var requestLabels = [...]string{
	"out of memory to allocate ", "Cannot allocate ", "requested buffer of size ", "Requested size was ",
	"Requested amount of memory (", "Requested amount of GPU memory (", "CUDA calloc async ", "CUDA calloc ",
	"error allocating ", "Error allocating ", "requested bytes: [", "Attempting to allocate ",
	// torch-directml, ggml Vulkan/Metal, the TPU runtime's program
	// reservation, TF's EigenAllocator, CANN's rtMalloc line, PyTorch MPS.
	"Could not allocate tensor with ", "memory allocation of size ", "Attempting to reserve ",
	"ran out of memory when allocating ", "' size ", "rtMalloc fail, purpose: page caching, type = 2, size:",
	"Tried to allocate ",
}

// readLabelledSizes reads the sizes that follow known labels, wherever they are.
func readLabelledSizes(text string, r *Result) {
	for _, l := range requestLabels {
		if v, ok := sizeAfter(text, l); ok {
			r.RequestedBytes = v
			break
		}
	}
	for _, l := range [...]string{"available memory is only ", "available memory is ", "There are "} {
		if v, ok := sizeAfter(text, l); ok {
			r.FreeBytes = v
			break
		}
	}
	// PyTorch MPSAllocator: "MPS allocated" is m_total_allocated_memory, the
	// allocator's total including cached blocks (MPSAllocator.h).
	if v, ok := sizeAfter(text, "(MPS allocated: "); ok {
		r.ReservedBytes = v
	}
	if v, ok := sizeAfter(text, "total memory reported: "); ok {
		r.TotalBytes = v
	}
	// Theano: "Driver report <free> bytes free and <total> bytes total".
	const driver = "Driver report "
	if i := strings.Index(text, driver); i >= 0 {
		w := window(text, i+len(driver))
		if f, e, ok := intAt(w, 0); ok && strings.HasPrefix(w[e:], " bytes free and ") {
			if t, e2, ok := intAt(w, e+len(" bytes free and ")); ok && strings.HasPrefix(w[e2:], " bytes total") {
				r.FreeBytes, r.TotalBytes = f, t
			}
		}
	}
	// Paddle 1.x: "enforce allocating <= available failed, <request> > <available>".
	const enforce = "enforce allocating <= available failed, "
	if i := strings.Index(text, enforce); i >= 0 {
		w := window(text, i+len(enforce))
		if req, e, ok := intAt(w, 0); ok && strings.HasPrefix(w[e:], " > ") {
			if free, _, ok := intAt(w, e+len(" > ")); ok {
				r.RequestedBytes, r.FreeBytes = req, free
			}
		}
	}
}

// sizeAfter reads "<size>" right after label: a number with a unit, a plain
// byte count ("<n>", "<n> bytes", "<n>-byte"), or CuPy's comma-grouped count.
func sizeAfter(text, label string) (int64, bool) {
	i := strings.Index(text, label)
	if i < 0 {
		return 0, false
	}
	w := window(text, i+len(label))
	if v, _, ok := sizeAt(w, 0); ok {
		return v, true
	}
	v, e, ok := groupedIntAt(w, 0)
	if !ok {
		return 0, false
	}
	// A plain count ends where the number does: not inside a word ("12ab"),
	// a decimal ("12.5") or a longer group; any other byte (a space, a
	// bracket, a sentence's full stop, an ANSI colour reset) ends it.
	switch {
	case e == len(w), strings.HasPrefix(w[e:], "-byte"):
		return v, true
	case isDigit(w[e]) || isLetter(w[e]) || w[e] == '_':
		return 0, false
	case (w[e] == '.' || w[e] == ',') && e+1 < len(w) && isDigit(w[e+1]):
		return 0, false
	}
	return v, true
}

// deviceLabels precede a device ordinal as libraries write it.
var deviceLabels = [...]string{
	"on GPU ", "device:GPU:", "/gpu:", "/device:GPU:", "GPU=", "device ordinal ", "cuda:", "CUDA:",
	"on device ", "GPU ", "current device: ", "deviceId: [", "device:gpu:", "device_id:",
}

// deviceFromText reads the first device ordinal found after a known label, or
// NCCL's "host:pid:tid [dev]" prefix; -1 when none.
func deviceFromText(text string) int {
	for _, l := range deviceLabels {
		for from := 0; ; {
			i := indexFrom(text, l, from)
			if i < 0 {
				break
			}
			from = i + len(l)
			if d := deviceAfter(text, from); d >= 0 && (from == len(text) || isDigit(text[from])) {
				return d
			}
		}
	}
	return ncclDevice(text)
}

// ncclDevice reads the "[<cudaDev>]" of NCCL's "host:pid:tid [dev] file:line NCCL WARN" prefix.
func ncclDevice(text string) int {
	i := strings.Index(text, " NCCL WARN")
	if i < 0 {
		return -1
	}
	line := text[:i]
	if nl := strings.LastIndexByte(line, '\n'); nl >= 0 {
		line = line[nl+1:]
	}
	// NCCL's debug.cc prints "%s:%d:%d [%d] %s:%d NCCL WARN": the "[dev]"
	// is the last bracket before the file:line, whatever a shipper put in
	// front of the host ("[rank3]: ").
	c := strings.LastIndex(line, "] ")
	if c < 0 {
		return -1
	}
	o := strings.LastIndexByte(line[:c], '[')
	if o <= 0 || line[o-1] != ' ' {
		return -1
	}
	v, e, ok := intAt(line, o+1)
	if !ok || e != c || v > 1<<20 {
		return -1
	}
	return int(v)
}

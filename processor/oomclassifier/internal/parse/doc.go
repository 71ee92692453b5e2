// Package parse recognises GPU out-of-memory messages in log text and
// extracts the numbers they state.
//
// Parse runs on every log record body the oom_classifier processor sees, so
// it is built in two stages: a prefilter (prefilter.go: one pass over the
// text, 16 or 32 bytes at a time in vector registers on amd64 and eight
// elsewhere, for a few rare keys; MayBeOOMOrXid also looks
// for the Xid tag in that pass) that rejects ordinary text without
// allocating, then
// recognisers written against each framework's own message template (the
// C++/Python source that prints it), tried from the most specific template
// to the most generic. The recognisers' case-insensitive searches are
// anchored on each word's rarest byte (fold.go), so that a near miss (a line
// that passed the prefilter) costs a few microseconds, not a walk per word.
//
// # Byte values
//
// Every framework listed here divides by powers of 1024 when it prints a size,
// whatever suffix it prints: PyTorch's format_size ("bytes", KiB, MiB, GiB),
// TensorFlow/XLA's HumanReadableNumBytes ("B", KiB…EiB, and the older "K",
// "M", "G" without "iB"), llama.cpp's "%.2f MiB" and its pinned-memory "MB".
// So K/KB/KiB = 1024, M/MB/MiB = 1024², G/GB/GiB = 1024³, T/TB/TiB = 1024⁴,
// P/PB/PiB = 1024⁵, E/EB/EiB = 1024⁶. A value is converted with exact integer
// arithmetic (decimal digits as numerator, 10^places as denominator, 128-bit
// product) and rounded to the nearest byte, half up. Where the message also
// gives an exact byte count (TF "(rounded to N)", "(N bytes)", XLA "(NB)",
// BFC "Limit:"/"InUse:" stats, CuPy's comma-grouped counts) the exact count
// is used. A value that does not fit in int64 is absent: PyTorch prints
// UINT64_MAX ("17179869184.00 GiB") for "no limit set".
//
// # PyTorch 2.x process list
//
// CUDACachingAllocator's reportProcessMemoryInfo lists every process NVML
// reports on the device. The entry whose pid equals getpid() is printed as
// "Including non-PyTorch memory, this process has X memory in use." (no pid);
// every other entry is "Process P has M memory in use.". So:
//
//   - "this process has X" present: ProcessBytes = X, PID absent (the text does
//     not give it), every "Process P has M" goes to OtherProcesses.
//   - absent (PyTorch in a container sees a different pid namespace than NVML,
//     so no entry matches getpid()): the failing process is one of the listed
//     ones. With one entry, it is that one (PID, ProcessBytes). With several,
//     the failing one must hold at least its allocator's reserved bytes; if
//     exactly one entry does, it is taken as the failing one and the rest go to
//     OtherProcesses; otherwise all go to CandidateProcesses and PID and
//     ProcessBytes stay absent.
//
// # What counts as a GPU allocation failure
//
// Recognised: PyTorch caching allocator (every generation, CUDA, HIP, XPU),
// its cudaMallocAsync backend, legacy THC "cuda runtime error (2) : out of
// memory"; TensorFlow OOM-when-allocating on a GPU device, BFC "ran out of
// memory trying to allocate" (the failing form only), stream-executor "failed
// to allocate … from device"; XLA/JAX RESOURCE_EXHAUSTED allocation failures;
// CUDA runtime/driver out-of-memory codes; CUBLAS_STATUS_ALLOC_FAILED,
// CUDNN_STATUS_ALLOC_FAILED; NCCL "Cuda failure 'out of memory'"; CuPy
// OutOfMemoryError; llama.cpp/ggml device buffer failures; vLLM "No available
// memory for the cache blocks", its startup free-memory check and its
// "max seq len … larger than the maximum number of tokens that can be stored
// in KV cache" (the KV cache that fits in the GPU's free memory is too small
// for the context: a capacity failure, kvcache.go); vllm.rs "Insufficient
// GPU memory for KVCache allocation"; TGI "Not enough memory to handle …
// tokens"; cuSPARSE "insufficient resources"; a CHECK on cuFFT returning
// CUFFT_ALLOC_FAILED (2); Thrust's and mallocMC's device failures; Theano's
// "Error allocating … bytes of device memory"; XGBoost's "Memory allocation
// error on worker …" with its free and requested memory, CatBoost's pool
// "Out of memory. Requested N MB" (boosting.go); TensorFlow's "Dst tensor is
// not initialized" (the copy's destination tensor on the device got no
// buffer: gpu_util.cc PrepareCopy).
//
// Also recognised: accelerator (TPU HBM/vmem) exhaustion reported by XLA, and
// the words of vocabulary.go in any wrapper; and, last, the general shape
// (device.go): a failure word joined to a device-memory noun in any case and
// separator style (out of device memory, OutOfDeviceMemory,
// VK_ERROR_OUT_OF_DEVICE_MEMORY, "not enough GPU video memory",
// Memory_Allocation_Failure), a status number that means out of memory next
// to the API that returned it (CUDA error 2, an allocation call's res=2),
// HAMi-core's quota check and spark-rapids' GPU retry OOMs, minus talk about
// OOMs (an advice or documentation word before the phrase, " means" or a
// "“" literal after it) and host memory. Every recognised message gets a
// device kind (DeviceKind: cuda, rocm, xpu, mps, metal, vulkan, webgpu,
// directml, npu, tpu, host) from the words it carries; NonNVIDIA says which
// kinds are never an NVIDIA GPU.
//
// Line-wrapped text (a terminal or a paste that broke the message) is read
// with each line break and its indentation taken as one space; a bare break
// inside a number, a size's unit or a template word (a console's hard wrap)
// is joined, and a torchrun rank tag repeated on continuation lines is
// dropped (normalise.go). A middle the reporter elided ("...") leaves the
// figures it hid absent. A message
// JSON-escaped inside a JSON log line ("\n", "\"", "\u003c") is read with
// its escapes undone. Any prefix or suffix a shipper adds (CRI, rank and
// worker tags, ANSI colours) is ignored: TestCitedOOMsInWrappers checks that
// every cited OOM reads the same inside such wrappers and as a JSON line.
//
// Pinned (page-locked) host memory allocated through a GPU API
// (cudaMallocHost, cudaHostAlloc, cuMemHostAlloc, hipHostMalloc,
// TensorFlow's pinned host allocator, ggml_cuda_host_malloc and "CUDA_Host"
// buffers, OpenCV's HostMem) is recognised with device kind host
// (pinned.go): the host's RAM, never an NVIDIA GPU's.
//
// # Reports and talk
//
// Before any recogniser reads a text, structure.go blanks (in a copy) what
// cannot be a report of a failure: host-memory reporters' lines (Slurm's
// srun/slurmstepd, the kernel's OOM killer and memcg lines), host and node
// names (node=, host= fields, the record's own host.name), documentation
// headings and prose list items, inline code that names an OOM, and source
// lines and literals that test for one. What a recogniser then finds is
// turned down as talk when its sentence is a condition or an instruction
// ("If you see…", "This error means you ran out of memory"), narrates
// ("running out of memory") or names a class of failures ("CUDA out of
// memory errors").
//
// Not recognised, by decision: CUDNN_STATUS_NOT_ENOUGH_WORKSPACE (the
// caller's workspace is too small for the chosen algorithm; nothing failed to
// allocate); CUBLAS_STATUS_NOT_INITIALIZED (often OOM underneath, but the text
// does not say so); TF OOMs on a CPU device
// or a host allocator (cpu, *_host_bfc); Ollama "model
// requires more system memory" (host memory); kernel OOM killer, Slurm task
// OOMs, CPU allocator, Java heap, illegal memory access, launch failures,
// asserts.
package parse

package parse

// Framework names, the values of Result.Framework and Result.Stack. They
// become the gpu.oom.framework attribute, so they are part of the contract.
const (
	FrameworkPyTorch     = "pytorch"
	FrameworkTensorFlow  = "tensorflow"
	FrameworkJAX         = "jax"
	FrameworkCUDA        = "cuda"
	FrameworkCuBLAS      = "cublas"
	FrameworkCuDNN       = "cudnn"
	FrameworkNCCL        = "nccl"
	FrameworkCuPy        = "cupy"
	FrameworkROCm        = "rocm"
	FrameworkVLLM        = "vllm"
	FrameworkTGI         = "tgi"
	FrameworkLlamaCpp    = "llamacpp"
	FrameworkOllama      = "ollama"
	FrameworkPaddle      = "paddle"
	FrameworkTensorRT    = "tensorrt"
	FrameworkONNXRuntime = "onnxruntime"
	FrameworkMXNet       = "mxnet"
	FrameworkRMM         = "rmm"
	FrameworkJulia       = "julia"
	FrameworkSGLang      = "sglang"
	FrameworkJava        = "java"
	FrameworkVLLMRs      = "vllm_rs" // vllm.rs, the Rust (candle) engine: its own templates

	// Libraries of the held-out batches (device.go).
	FrameworkHAMi        = "hami"         // HAMi-core, the GPU-sharing layer's driver-API wrapper
	FrameworkSparkRapids = "spark_rapids" // spark-rapids' GPU retry OOM exceptions
	FrameworkCANN        = "cann"         // Huawei Ascend's runtime (error codes EL…)
	FrameworkDirectML    = "directml"     // torch-directml / DirectML allocators
	FrameworkVulkan      = "vulkan"       // a Vulkan result code (VK_ERROR_OUT_OF_DEVICE_MEMORY, vulkan.hpp, vulkano)
	FrameworkMetal       = "metal"        // a Metal command-buffer status (kIOGPUCommandBufferCallbackErrorOutOfMemory)
	FrameworkWGPU        = "wgpu"         // wgpu / WebGPU
	FrameworkOpenCV      = "opencv"       // OpenCV's CUDA module ("Gpu API call")
	FrameworkBlender     = "blender"      // Blender Cycles
	FrameworkXGBoost     = "xgboost"      // XGBoost's device allocator (boosting.go)
	FrameworkCatBoost    = "catboost"     // CatBoost's GPU memory pool (boosting.go)
)

// Result is what one OOM message states. Every number is -1 when the message
// does not state it; 0 means the message said zero.
type Result struct {
	// Framework is the library whose message this is (one of the Framework*
	// constants): the one whose template decides what each number means.
	Framework string
	// Stack is the serving stack the message was logged from (vllm, tgi,
	// ollama) when the text says so, else "". A PyTorch OOM inside vLLM has
	// Framework "pytorch" and Stack "vllm".
	Stack string
	// DeviceKind is the accelerator the message is about (one of the
	// Device* constants, device.go): cuda unless the text names another.
	DeviceKind string

	RequestedBytes int64 // the allocation that failed
	TotalBytes     int64 // device capacity as the framework saw it
	FreeBytes      int64 // device free memory as the framework saw it
	AllocatedBytes int64 // held by live tensors / allocations
	ReservedBytes  int64 // held by the framework's allocator in total (allocated + cached)
	ProcessBytes   int64 // the failing process's total on the device
	LimitBytes     int64 // a cap below capacity (memory fraction, BFC limit, vLLM utilisation)

	DeviceIndex int // device ordinal as written in the message
	PID         int // the failing process, where the message states it

	// Derived marks the values computed from what the message says rather than
	// stated in it (DerivedRequested, DerivedProcess).
	Derived uint8

	// OtherProcesses are processes on the device known not to be the failing one.
	OtherProcesses []Process
	// CandidateProcesses are listed processes of which one, not identifiable
	// from the text, is the failing one (see the package doc).
	CandidateProcesses []Process
}

// Derived flags.
const (
	// DerivedRequested: RequestedBytes is a TensorFlow tensor's element count
	// times its dtype size, not a size the message printed.
	DerivedRequested uint8 = 1 << iota
	// DerivedProcess: PID and ProcessBytes are the listed process that must be
	// the failing one (see the package doc), not "this process has".
	DerivedProcess
)

// Process is one "Process P has M memory in use" entry.
type Process struct {
	PID   int
	Bytes int64
}

// absent is a Result with every value marked absent.
var absent = Result{
	RequestedBytes: -1, TotalBytes: -1, FreeBytes: -1, AllocatedBytes: -1,
	ReservedBytes: -1, ProcessBytes: -1, LimitBytes: -1, DeviceIndex: -1, PID: -1,
}

func newResult(framework string) Result {
	r := absent
	r.Framework = framework
	return r
}

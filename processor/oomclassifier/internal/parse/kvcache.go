package parse

import "strings"

// parseKVCache reads serving engines' KV-cache capacity failures: the engine
// measured the device's free memory, planned its KV cache, and found it too
// small for the configured context. Nothing threw cudaErrorMemoryAllocation,
// but the GPU lacked the memory, and the advice is to give it more.
//
// vLLM (vllm/worker/worker.py raise_if_cache_size_invalid, 0.2 to 0.6):
//
//	The model's max seq len (<max_model_len>) is larger than the maximum number of tokens that can be stored in KV cache (<block_size*num_gpu_blocks>). Try increasing `gpu_memory_utilization` …
//
// Both numbers are tokens, not bytes: nothing is read from this sentence.
// The profiling summary vLLM 0.6.4+ logs before it (determine_num_available_blocks,
// "Memory profiling results: total_gpu_memory=%.2fGiB …" with total_gpu_memory
// from torch.cuda.mem_get_info()[1] divided by GiB_bytes = 1<<30) gives the
// device capacity, TotalBytes.
//
// vllm.rs (src/utils/kvcache_allocator.rs, KVCacheError::InsufficientGpuMemory):
//
//	GPU <d>: total <T> GB, free <F> GB, kv_fraction <k>%, Max usable for KVCache <U> GB   (WARN, before planning)
//	KVCache allocation failed: Insufficient GPU memory for KVCache allocation.
//	Available: <A> MB, Required: <R> MB, Reserved: <S> MB.
//
// T and F are cuMemGetInfo_v2's total and free divided by SIZE_IN_GB =
// 1024³ ("GB" meaning GiB); A = F × kv_fraction (the KV budget, not the
// device's free memory, so not read), R the KV cache bytes the configured
// sequences need (RequestedBytes), S a constant 512 MiB head-room (not read);
// all divided by SIZE_IN_MB = 1024².
func parseKVCache(text string) (Result, bool) {
	if strings.Contains(text, "is larger than the maximum number of tokens that can be stored in KV cache") {
		r := newResult(FrameworkVLLM)
		r.Stack = FrameworkVLLM
		if v, ok := sizeAfter(text, "total_gpu_memory="); ok {
			r.TotalBytes = v
		}
		return r, true
	}
	const rs = "Insufficient GPU memory for KVCache allocation"
	i := strings.Index(text, rs)
	if i < 0 {
		return absent, false
	}
	r := newResult(FrameworkVLLMRs)
	r.Stack = FrameworkVLLMRs // it is its own serving stack, not vLLM (which its log names contain)
	if v, ok := sizeAfter(text[i:], "Required: "); ok {
		r.RequestedBytes = v
	}
	// The planner's WARN line comes first in the same log.
	if j := strings.LastIndex(text[:i], ": total "); j >= 0 {
		if g := strings.LastIndex(text[max(0, j-16):j], "GPU "); g >= 0 {
			r.DeviceIndex = deviceAfter(text, max(0, j-16)+g+len("GPU "))
		}
		w := window(text, j+len(": total "))
		if t, e, ok := sizeAt(w, 0); ok && strings.HasPrefix(w[e:], ", free ") {
			r.TotalBytes = t
			if f, _, ok := sizeAt(w, e+len(", free ")); ok {
				r.FreeBytes = f
			}
		}
	}
	return r, true
}

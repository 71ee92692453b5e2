package parse

import "strings"

// Gradient-boosting libraries' device allocation failures. Each prints its
// own template with its own notion of what the numbers are.

// parseXGBoost recognises XGBoost's dh::detail::ThrowOOMError
// (src/common/device_vector.cu at dmlc/xgboost 379b29f0836b9dbc313b993d8e5743bd452d4117,
// earlier in src/common/device_helpers.cuh):
//
//	Memory allocation error on worker <rank>: <what>
//	- Free memory: <free>
//	- Requested memory: <request>
//
// <free> is dh::AvailableMemory(device), cudaMemGetInfo's free memory of the
// current device; <request> the failed allocation. Since 2.x both are
// xgboost::common::HumanMemUnit (src/common/common.cc): the bytes divided by
// 1024^3, 1024^2 or 1024 with the suffix GB, MB or KB (else "B"), printed
// with the stream's default six significant digits, so "1.95398GB" is
// 1.95398 × 1024^3 bytes rounded, as stated. XGBoost 1.x printed the raw byte
// counts. <rank> is the collective's worker rank, not a device ordinal.
func parseXGBoost(text string) (Result, bool) {
	const anchor = "Memory allocation error on worker "
	i := strings.Index(text, anchor)
	if i < 0 {
		return absent, false
	}
	w := window(text, i)
	if !containsAny(w, "out of memory", "out_of_memory", "bad_alloc", "MemoryAllocation") {
		return absent, false
	}
	r := newResult(FrameworkXGBoost)
	if v, ok := sizeAfter(w, "- Free memory: "); ok {
		r.FreeBytes = v
	}
	if v, ok := sizeAfter(w, "- Requested memory: "); ok {
		r.RequestedBytes = v
	}
	return r, true
}

// parseCatBoost recognises CatBoost's TStackLikeMemoryPool::Create
// (catboost/cuda/cuda_lib/memory_pool/stack_like_memory_pool.h at
// catboost/catboost 2d77ad30e0226a037bd7f4297c8c5ebab11ee75f):
//
//	ythrow TOutOfMemoryError() << "Error: Out of memory. Requested " << requestedBlockSize / MB << " MB; Free " << (LastBlock->Size) / MB << " MB";
//
// with MB the double 1024.0 * 1024.0: Requested is the request rounded up to
// the pool's 256-byte alignment, in MiB. Free is the size of the pool's last
// free block, the memory CatBoost reserved up front and has left, not the
// device's free memory, so it is not read. Releases before the " MB" suffix
// (0.7–0.9) printed both without a unit: a size the text does not state.
func parseCatBoost(text string) (Result, bool) {
	const anchor = "Error: Out of memory. Requested "
	i := strings.Index(text, anchor)
	if i < 0 {
		return absent, false
	}
	r := newResult(FrameworkCatBoost)
	w := window(text, i+len(anchor))
	if v, e, ok := sizeAt(w, 0); ok && strings.HasPrefix(w[e:], "; Free ") && strings.EqualFold(strings.TrimSpace(w[numberEnd(w, 0):e]), "MB") {
		r.RequestedBytes = v
	}
	return r, true
}

package classify

import "fmt"

// recommendations is the fix per cause, written for the person who owns the job.
var recommendations = map[string]string{
	CauseGPUFault: "Treat this as a fault, not a memory shortage: read the Xid in the kernel log, " +
		"drain the node and reset or replace the GPU for hardware Xids, and fix the kernel for application Xids (13, 31, 43) before retrying.",
	CauseZombieContext: "Find what still holds the orphaned context (nvidia-smi shows no owner): look for defunct processes, " +
		"stopped-but-not-removed containers or a stuck MPS server and kill them; if nothing owns it, reset the GPU once it is idle.",
	CauseOtherTenant: "Another workload shares this GPU: give the job a dedicated GPU (Kubernetes device plugin limits, " +
		"CUDA_VISIBLE_DEVICES), partition it with MIG, or cap each tenant's memory (per-process memory fraction).",
	CauseWorkerContextOverhead: "Keep CUDA out of helper processes: create CUDA state only in the main process, " +
		"start DataLoader workers with the spawn method and without touching torch.cuda, and pin each rank to its own device before any CUDA call.",
	CauseFragmentation: "Reduce fragmentation in the caching allocator: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True " +
		"(or max_split_size_mb), and release the cache with torch.cuda.empty_cache() at phase boundaries such as between training and evaluation.",
	CauseCapacityLoss: "The GPU has lost usable memory: check nvidia-smi -q for retired pages and remapped rows, reset the GPU " +
		"to apply pending retirements, and replace the card if rows failed to remap or the total stays below the product's.",
	CauseWorkloadTooLarge: "The model or batch does not fit this GPU: lower the batch size or sequence length, use mixed precision, " +
		"activation checkpointing, or shard the model (FSDP, tensor parallelism), or move to a GPU with more memory.",
	CauseUnknown: "Collect more evidence: run the gpu_mem receiver on this node with per-process metrics enabled " +
		"and keep the framework's full OOM message, then classify the next occurrence.",
}

// recommend returns the fix for a cause; the leak's names its growth rate.
func recommend(cause string, f *facts) string {
	if cause == CauseMemoryLeak {
		return fmt.Sprintf("Memory grows about %s/s until it runs out: look for tensors kept across steps "+
			"(losses or outputs accumulated without .detach() or .item()), caches or lists that grow every iteration, "+
			"and graphs retained by retain_graph; compare torch.cuda.memory_allocated() between steps to find it.",
			humanBytesF(f.leak.slope))
	}
	return recommendations[cause]
}

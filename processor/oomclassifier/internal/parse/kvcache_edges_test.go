package parse

import "testing"

// Edges of vllm.rs's KV-cache failure: the sentence and the planner's line at
// offset 0, "GPU <d>" exactly as far back as it is looked for, and a line
// without its free figure.
func TestParseKVCacheEdges(t *testing.T) {
	const rs = "Insufficient GPU memory for KVCache allocation.\nAvailable: 29353.63 MB, Required: 131072.00 MB, Reserved: 512.00 MB."
	for _, tt := range []struct {
		name                string
		text                string
		device              int
		total, free, reqstd int64
	}{
		{"sentence_at_0", rs, -1, -1, -1, 131072 << 20},
		{"planner_at_0", ": total 94.97 GB, free 30.17 GB\n" + rs, -1, 101973261025, 32394790830, 131072 << 20},
		{"gpu_at_0", "GPU 3: total 94 GB, free 30 GB\n" + rs, 3, 94 << 30, 30 << 30, 131072 << 20},
		{"gpu_16_back", "GPU 7 [abcdefgh]: total 94 GB, free 30 GB\n" + rs, 7, 94 << 30, 30 << 30, 131072 << 20},
		{"gpu_17_back", "GPU 7 [abcdefghi]: total 94 GB, free 30 GB\n" + rs, -1, 94 << 30, 30 << 30, 131072 << 20},
		{"no_free", "GPU 1: total 94 GB, kv_fraction 95%\n" + rs, 1, -1, -1, 131072 << 20},
		{"free_unreadable", "GPU 1: total 94 GB, free lots\n" + rs, 1, 94 << 30, -1, 131072 << 20},
		{"no_required", "GPU 1: total 94 GB, free 30 GB\nInsufficient GPU memory for KVCache allocation.", 1, 94 << 30, 30 << 30, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := parseKVCache(tt.text)
			if !ok {
				t.Fatal("not recognised")
			}
			if r.DeviceIndex != tt.device || r.TotalBytes != tt.total || r.FreeBytes != tt.free || r.RequestedBytes != tt.reqstd {
				t.Errorf("device %d total %d free %d requested %d; want %d %d %d %d",
					r.DeviceIndex, r.TotalBytes, r.FreeBytes, r.RequestedBytes, tt.device, tt.total, tt.free, tt.reqstd)
			}
			if r.Framework != FrameworkVLLMRs || r.Stack != FrameworkVLLMRs {
				t.Errorf("framework %q stack %q", r.Framework, r.Stack)
			}
		})
	}
	r, ok := parseKVCache("The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (2048). total_gpu_memory=79.19GiB")
	if !ok || r.Framework != FrameworkVLLM || r.Stack != FrameworkVLLM || r.TotalBytes != 85029615043 {
		t.Errorf("vLLM: ok %v framework %q stack %q total %d", ok, r.Framework, r.Stack, r.TotalBytes)
	}
	if _, ok := parseKVCache("KVCache allocation failed"); ok {
		t.Error("recognised without the sentence")
	}
}

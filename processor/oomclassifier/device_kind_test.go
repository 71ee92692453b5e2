package oomclassifier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/parse"
)

func TestDeviceKindOnEveryOOM(t *testing.T) {
	cases := map[string]string{
		pytorchOOM: parse.DeviceCUDA,
		"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.88 GiB. GPU 0 has a total capacity of 23.98 GiB of which 1.70 GiB is free. Of the allocated memory 21.65 GiB is allocated by PyTorch, and 279.78 MiB is reserved by PyTorch but unallocated.": parse.DeviceROCm,
		"MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool.":                                                                                                    parse.DeviceMPS,
		"ggml_vulkan: Device memory allocation of size 118497280 failed.\nggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory":                                                                                                                            parse.DeviceVulkan,
	}
	for body, kind := range cases {
		t.Run(kind, func(t *testing.T) {
			p := newProcessors(t, testConfig(0), nopSettings())
			require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("node1", t0, text(body))))
			attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
			assert.Equal(t, kind, attrs[attrDeviceKind])
		})
	}
}

func TestNonNVIDIANotMatchable(t *testing.T) {
	var o oomRecord
	o.msg.DeviceKind = parse.DeviceCUDA
	assert.True(t, nvmlMatchable(o))
	assert.Equal(t, "e.", withDeviceNote("e.", o))
	for _, k := range []string{parse.DeviceVulkan, parse.DeviceWebGPU, parse.DeviceDirectML} {
		o.msg.DeviceKind = k
		assert.True(t, nvmlMatchable(o), "%s may run on an NVIDIA GPU", k)
	}
	for _, k := range []string{parse.DeviceROCm, parse.DeviceXPU, parse.DeviceMPS, parse.DeviceMetal, parse.DeviceNPU, parse.DeviceTPU} {
		o.msg.DeviceKind = k
		assert.False(t, nvmlMatchable(o), k)
		assert.Contains(t, withDeviceNote("e.", o), "names a "+k+" device")
	}
}

// A ROCm OOM on a host whose window holds one NVIDIA GPU is not matched to it (the host's
// only GPU would be matched otherwise): no hw.id, the evidence says why, and the same message
// as CUDA is matched as before.
func TestNonNVIDIAOOMIsNotMatchedToTheOnlyGPU(t *testing.T) {
	const rocm = "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.88 GiB. GPU 0 has a total capacity of 23.98 GiB of which 1.70 GiB is free. Of the allocated memory 21.65 GiB is allocated by PyTorch, and 279.78 MiB is reserved by PyTorch but unallocated."
	for body, matched := range map[string]bool{rocm: false, strings.Replace(rocm, "HIP", "CUDA", 1): true} {
		p := newProcessors(t, testConfig(0), nopSettings())
		for i := range 5 {
			require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), metricsOf(gpuMetrics{
				host: "node1", hwID: "GPU-only", at: t0.Add(time.Duration(i-4) * time.Second),
				used: 20 * gib, total: 40 * gib, procs: map[int64]int64{4242: 20 * gib},
			})))
		}
		require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("node1", t0, text(body))))
		attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
		if matched {
			assert.Equal(t, "GPU-only", attrs[attrHWID], "CUDA: the host's only GPU")
			continue
		}
		assert.NotContains(t, attrs, attrHWID, "ROCm: never an NVML GPU")
		assert.Contains(t, attrs[attrEvidence], "names a rocm device")
		assert.Contains(t, attrs[attrEvidence], "not matched to an NVML GPU")
	}
}

package oomclassifier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/metadata"
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
	assert.Equal(t, "", deviceNote(o)) // the evidence is left as it is
	for _, k := range []string{parse.DeviceVulkan, parse.DeviceWebGPU, parse.DeviceDirectML} {
		o.msg.DeviceKind = k
		assert.True(t, nvmlMatchable(o), "%s may run on an NVIDIA GPU", k)
	}
	for _, k := range []string{parse.DeviceROCm, parse.DeviceXPU, parse.DeviceMPS, parse.DeviceMetal, parse.DeviceNPU, parse.DeviceTPU} {
		o.msg.DeviceKind = k
		assert.False(t, nvmlMatchable(o), k)
		assert.Contains(t, deviceNote(o), "names a "+k+" device")
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

// Pinned host memory (cudaMallocHost's cudaErrorMemoryAllocation) is annotated with device kind
// host, is never matched to a GPU, not even the host's only one, and is not counted as a GPU OOM;
// a GPU OOM in the same batch still is.
func TestPinnedHostIsNotAGPUOOM(t *testing.T) {
	const pinned = "FATAL server failed during startup | cudaMallocHost failed: cudaErrorMemoryAllocation: out of memory"
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	p := newProcessors(t, testConfig(0), set)
	ctx := context.Background()
	for i := range 5 {
		require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(gpuMetrics{
			host: "node1", hwID: "GPU-only", at: t0.Add(time.Duration(i-4) * time.Second),
			used: 20 * gib, total: 40 * gib, procs: map[int64]int64{4242: 20 * gib},
		})))
	}
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("node1", t0, text(pinned))))
	attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, parse.DeviceHost, attrs[attrDeviceKind])
	assert.NotContains(t, attrs, attrHWID, "pinned host memory is no GPU's")
	assert.Contains(t, attrs[attrEvidence], "pinned host memory")
	_, err := tel.GetMetric(metadata.MetricOOMs)
	assert.Error(t, err, "no GPU OOM counted")

	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("node1", t0, text(pytorchOOM))))
	m, err := tel.GetMetric(metadata.MetricOOMs)
	require.NoError(t, err)
	assert.Equal(t, int64(1), sumOf(m), "the GPU OOM is counted")
}

// A host named after its GPUs is no device context: the kernel's memcg line and Slurm's task
// OOM from such a host are not GPU OOMs, and neither is a line that names nothing but the
// record's own host.name beside host-memory words.
func TestHostNamedGPUIsNoDeviceContext(t *testing.T) {
	for host, body := range map[string]string{
		"paigcr-a-gpu-1037": "Nov 05 21:14:12 paigcr-a-gpu-1037 kernel: Memory cgroup out of memory: Kill process 19302 (java) score 1337 or sacrifice child",
		"gpu001":            "srun: error: gpu001: task 0: Out Of Memory",
		"gpu-node-7":        "gpu-node-7 watchdog: out of memory, restarting the exporter",
	} {
		p := newProcessors(t, testConfig(0), nopSettings())
		require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith(host, t0, text(body))))
		attrs := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
		assert.NotContains(t, attrs, attrDeviceKind, body)
		assert.NotContains(t, attrs, attrCause, body)
	}
}

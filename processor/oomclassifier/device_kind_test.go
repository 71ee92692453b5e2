package oomclassifier

import (
	"context"
	"testing"

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

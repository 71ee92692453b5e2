package oomclassifier

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/window"
)

// This file reads nvidia.gpu.allocation: which pods the kubelet gave a GPU (the gpu_mem
// receiver's PodResources source). Matching reads it when a pod's OOM comes before any of
// its processes is listed, and other_tenant evidence to tell a scheduled tenant from a stray.

// appendAllocations adds the metric's points to buf: one per pod × container the GPU is
// allocated to. A point without its own time or with a value of 0 (not allocated) is skipped.
func appendAllocations(buf []window.AllocationPoint, m pmetric.Metric) []window.AllocationPoint {
	dps, ok := numberPoints(m)
	if !ok {
		return buf
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		if v, ok := pointValue(dp); !ok || v <= 0 || dp.Timestamp() == 0 || dp.Flags().NoRecordedValue() {
			continue
		}
		buf = append(buf, window.AllocationPoint{T: int64(dp.Timestamp())})
		readAllocation(dp.Attributes(), &buf[len(buf)-1].Allocation)
	}
	return buf
}

// readAllocation reads the point's attributes in one pass.
func readAllocation(attrs pcommon.Map, a *window.Allocation) {
	for k, v := range attrs.All() {
		switch k {
		case attrPodUID:
			a.PodUID = strValue(v)
		case attrPodName:
			a.PodName = strValue(v)
		case attrNamespace:
			a.Namespace = strValue(v)
		case attrContainerName:
			a.Container = strValue(v)
		case attrAllocDeviceID:
			a.DeviceID = strValue(v)
		case attrAllocResource:
			a.Resource = strValue(v)
		}
	}
}

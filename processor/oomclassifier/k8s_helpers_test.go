package oomclassifier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Builders for a Kubernetes node as the gpu_mem receiver reports it with PodResources on:
// per-process points with the pod's names, and nvidia.gpu.allocation on each GPU resource.

// kpod is a pod's container.
type kpod struct{ uid, ns, name, container, cid string }

func podOf(i int) kpod {
	return kpod{uid: fmt.Sprintf("uid-%d", i), ns: "ml", name: fmt.Sprintf("trainer-%d", i), container: "main",
		cid: fmt.Sprintf("c%d", i) + strings.Repeat("0ffee", 12) + "a"}
}

// kproc is a process of a pod (pod.uid "" = a process of no pod) holding bytes(sec); job
// and step are its Slurm job's, "" outside one.
type kproc struct {
	pid, vpid int64
	pod       kpod
	bytes     func(sec int) int64
	job, step string
}

// kalloc is one allocation of the GPU to a pod's container.
type kalloc struct {
	pod              kpod
	device, resource string
}

type kgpu struct {
	hwID, bus, model string
	index            int64
	total            int64
	procs            []kproc
	allocs           []kalloc
	// unlisted is memory in use that no listed process holds; hidden says the driver hid
	// other PID namespaces' processes (nvidia.gpu.process.hidden, sent only when set).
	unlisted int64
	hidden   bool
}

func flatBytes(b int64) func(int) int64 { return func(int) int64 { return b } }

// appendTo adds one collection of g at second sec.
func (g kgpu) appendTo(md pmetric.Metrics, host string, sec int) {
	at := pcommon.NewTimestampFromTime(t0.Add(time.Duration(sec) * time.Second))
	rm := md.ResourceMetrics().AppendEmpty()
	res := rm.Resource().Attributes()
	res.PutStr(resHostName, host)
	res.PutStr(attrHWID, g.hwID)
	res.PutStr(resHWModel, g.model)
	res.PutStr(attrPCIBusID, g.bus)
	res.PutInt(resGPUIndex, g.index)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	used := int64(512<<20) + g.unlisted
	pm := ms.AppendEmpty()
	pm.SetName(metricProcess)
	pdps := pm.SetEmptySum().DataPoints()
	for _, p := range g.procs {
		dp := pdps.AppendEmpty()
		b := p.bytes(sec)
		used += b
		dp.SetTimestamp(at)
		dp.SetIntValue(b)
		a := dp.Attributes()
		a.PutInt(attrProcessPID, p.pid)
		if p.vpid > 0 && p.vpid != p.pid {
			a.PutInt(attrProcessVPID, p.vpid)
		}
		a.PutStr(attrProcessName, "python3")
		a.PutStr(attrProcessType, "compute")
		if p.pod.cid != "" {
			a.PutStr(attrContainerID, p.pod.cid)
		}
		if p.pod.uid != "" {
			a.PutStr(attrPodUID, p.pod.uid)
			a.PutStr(attrPodName, p.pod.name)
			a.PutStr(attrNamespace, p.pod.ns)
			a.PutStr(attrContainerName, p.pod.container)
		}
		if p.job != "" {
			a.PutStr(attrSlurmJob, p.job)
			a.PutStr(attrSlurmStep, p.step)
		}
	}
	if g.hidden {
		dp := ms.AppendEmpty().SetEmptyGauge().DataPoints().AppendEmpty()
		ms.At(ms.Len() - 1).SetName(metricHidden)
		dp.SetTimestamp(at)
		dp.SetIntValue(1)
	}
	for name, v := range map[string]int64{metricUsage: used, metricLimit: g.total, metricFree: g.total - used} {
		m := ms.AppendEmpty()
		m.SetName(name)
		dp := m.SetEmptySum().DataPoints().AppendEmpty()
		dp.SetTimestamp(at)
		dp.SetIntValue(v)
	}
	if len(g.allocs) > 0 {
		am := ms.AppendEmpty()
		am.SetName(metricAllocation)
		dps := am.SetEmptyGauge().DataPoints()
		for _, al := range g.allocs {
			dp := dps.AppendEmpty()
			dp.SetTimestamp(at)
			dp.SetIntValue(1)
			a := dp.Attributes()
			a.PutStr(attrPodUID, al.pod.uid)
			a.PutStr(attrPodName, al.pod.name)
			a.PutStr(attrNamespace, al.pod.ns)
			a.PutStr(attrContainerName, al.pod.container)
			a.PutStr(attrAllocDeviceID, al.device)
			a.PutStr(attrAllocResource, al.resource)
		}
	}
}

// feedNode sends secs per-second collections of the host's GPUs.
func feedNode(t *testing.T, p processors, host string, secs int, gpus ...kgpu) {
	t.Helper()
	for s := 0; s < secs; s++ {
		md := pmetric.NewMetrics()
		for _, g := range gpus {
			g.appendTo(md, host, s)
		}
		require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), md))
	}
}

// torchOOM is a PyTorch 2.x message from inside a container: no pids, the ordinal CUDA gave
// the device in the pod, and "this process" for the failing one (GiB figures).
func torchOOM(ordinal int, req, free, process, allocated, reserved float64) string {
	return fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d has a total capacity of 40.00 GiB of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f GiB is reserved by PyTorch but unallocated.",
		req, ordinal, free, process, allocated, reserved-allocated)
}

// podLogs is one OOM line as file_log's container parser delivers it from
// /var/log/pods/<ns>_<pod>_<uid>/<container>/0.log: the pod on the resource, no pid.
func podLogs(host string, at time.Time, pod kpod, msg string) plog.Logs {
	ld := logsWith(host, at, text(msg))
	res := ld.ResourceLogs().At(0).Resource().Attributes()
	res.PutStr(attrPodUID, pod.uid)
	res.PutStr(attrPodName, pod.name)
	res.PutStr(attrNamespace, pod.ns)
	res.PutStr(attrContainerName, pod.container)
	return ld
}

// classified runs the logs through the processor and returns the attributes of the record.
func classified(t *testing.T, p processors, ld plog.Logs) map[string]any {
	t.Helper()
	n := len(p.lsink.AllLogs())
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
	require.Len(t, p.lsink.AllLogs(), n+1)
	return firstRecord(p.lsink.AllLogs()[n]).Attributes().AsRaw()
}

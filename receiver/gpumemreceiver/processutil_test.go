package gpumemreceiver

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// pmonTree is an in-memory /proc of the sampled processes.
func pmonTree() map[uint32]procEntry {
	return map[uint32]procEntry{
		4242: {"python3", "0::/kubepods/besteffort/pod1b2c3d4e-aaaa-bbbb-cccc-111122223333/" + hex64 + "\n"},
		4343: {"ollama", "0::/\n"},
	}
}

// What nvidia-smi pmon shows as sm and mem: one point per task per sampled process, with the
// process attributes; a process sampled twice (the first read, from 0) is reported once,
// at its newest sample, and the next read asks only for newer samples.
func TestProcessUtilization(t *testing.T) {
	g := newFakeGPU(0)
	g.compute = []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: uint64(gib)}, {Pid: 4343, UsedGpuMemory: uint64(gib)}}
	g.pmon = []nvml.ProcessUtilizationSample{
		{Pid: 4242, TimeStamp: 1_000, SmUtil: 10, MemUtil: 5},
		{Pid: 4343, TimeStamp: 1_500, SmUtil: 7, MemUtil: 3},
		{Pid: 4242, TimeStamp: 2_000, SmUtil: 87, MemUtil: 41},
	}
	fsys := procTree(pmonTree())
	// The executable name is the exe link's base name, as on the memory points, not comm.
	fsys["4242/exe"] = &fstest.MapFile{Data: []byte("/opt/conda/bin/python3.11"), Mode: fs.ModeSymlink}
	r := startWith(t, newFakeNVML(g), fsys)

	md, err := r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	pts := byGPU(md)[g.uuid]["nvidia.gpu.process.utilization"]
	require.Len(t, pts, 4, "two tasks for each of two processes")
	got := map[[2]any]float64{}
	for _, p := range pts {
		got[[2]any{p.attrs["process.pid"], p.attrs["hw.gpu.task"]}] = p.value
	}
	assert.Equal(t, map[[2]any]float64{
		{int64(4343), "general"}: 0.07, {int64(4343), "memory_controller"}: 0.03,
		{int64(4242), "general"}: 0.87, {int64(4242), "memory_controller"}: 0.41,
	}, got)
	for _, p := range pts {
		if p.attrs["process.pid"] == int64(4242) {
			assert.Equal(t, "python3.11", p.attrs["process.executable.name"])
			assert.Equal(t, hex64, p.attrs["container.id"])
			assert.Equal(t, "1b2c3d4e-aaaa-bbbb-cccc-111122223333", p.attrs["k8s.pod.uid"])
		}
	}

	g.pmon = nil // nothing busy since: NOT_FOUND is no error and no points
	md, err = r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	assert.Empty(t, byGPU(md)[g.uuid]["nvidia.gpu.process.utilization"])
	assert.Equal(t, []uint64{0, 2_000}, g.pmonSince, "the second read asks for samples after the newest seen")
}

// A GPU without the call is probed once and goes quiet; a GPU in MIG mode is not asked at
// all (NVML answers NOT_SUPPORTED there, which would switch the call off for good).
func TestProcessUtilizationNotSupported(t *testing.T) {
	old := newFakeGPU(0)
	old.pmonErr = nvml.ERROR_NOT_SUPPORTED
	mig := newFakeGPU(1)
	mig.mig = &fakeMIG{enabled: true}
	r := startWith(t, newFakeNVML(old, mig), procTree(pmonTree()))
	for range 3 {
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		assert.Empty(t, byGPU(md)[old.uuid]["nvidia.gpu.process.utilization"])
	}
	assert.Len(t, old.pmonSince, 1, "NOT_SUPPORTED is probed once")
	assert.Empty(t, mig.pmonSince, "never asked in MIG mode")

	mig.mig.enabled = false
	mig.pmon = []nvml.ProcessUtilizationSample{{Pid: 4343, TimeStamp: 9, SmUtil: 50, MemUtil: 20}}
	var pts []point
	for range nvmlx.MIGRecheckEvery + 1 { // the MIG mode is re-read every nvmlx.MIGRecheckEvery scrapes
		md, err := r.scrapeMetrics(context.Background())
		require.NoError(t, err)
		if pts = byGPU(md)[mig.uuid]["nvidia.gpu.process.utilization"]; pts != nil {
			break
		}
	}
	assert.Len(t, pts, 2, "reported once the GPU leaves MIG mode")
}

// Another failure costs the one metric, names the GPU and the call, and is retried.
func TestProcessUtilizationError(t *testing.T) {
	g := newFakeGPU(0)
	g.pmonErr = nvml.ERROR_UNKNOWN
	r := startWith(t, newFakeNVML(g), procTree(pmonTree()))
	md, err := r.scrapeMetrics(context.Background())
	var pe scrapererror.PartialScrapeError
	require.True(t, errors.As(err, &pe), "want a partial scrape error, got %v", err)
	assert.Equal(t, 1, pe.Failed)
	assert.ErrorContains(t, err, "read process utilization of GPU "+g.uuid)
	assert.NotEmpty(t, byGPU(md)[g.uuid]["hw.gpu.memory.usage"], "the rest of the GPU is recorded")

	g.pmonErr = nvml.SUCCESS
	g.pmon = []nvml.ProcessUtilizationSample{{Pid: 4242, TimeStamp: 3, SmUtil: 1, MemUtil: 1}}
	md, err = r.scrapeMetrics(context.Background())
	require.NoError(t, err)
	assert.Len(t, byGPU(md)[g.uuid]["nvidia.gpu.process.utilization"], 2)
}

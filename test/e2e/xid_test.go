//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
	"github.com/gpumem/otelcol-gpumem/internal/xid"
)

// xidWant is what one Xid log record must carry.
type xidWant struct {
	code        int64
	description string
	origin      string
	source      string // nvml, kmsg, both
	hwID        string // "" for a GPU NVML does not list
	busID       string
	pid         int64 // 0: the record names no process
	name        string
	body        string // a prefix of the body
}

// checkXid compares one record with what it must carry.
func checkXid(t *testing.T, r record, w xidWant) {
	t.Helper()
	assert.Equal(t, w.code, r.Attrs["nvidia.gpu.xid"], "%v", r)
	assert.Equal(t, w.description, r.Attrs["nvidia.gpu.xid.description"], "%v", r)
	assert.Equal(t, w.origin, r.Attrs["nvidia.gpu.xid.origin"], "%v", r)
	assert.Equal(t, xid.Lookup(int(w.code)).Mnemonic, r.Attrs["nvidia.gpu.xid.mnemonic"], "%v", r)
	assert.Equal(t, xid.Lookup(int(w.code)).Action, r.Attrs["nvidia.gpu.xid.action"], "%v", r)
	assert.Equal(t, w.source, r.Attrs["nvidia.gpu.xid.source"], "%v", r)
	assert.Equal(t, w.busID, r.Attrs["nvidia.gpu.pci.bus_id"], "%v", r)
	assert.Equal(t, w.busID, r.Resource["nvidia.gpu.pci.bus_id"], "%v", r)
	assert.Equal(t, "nvidia.gpu.xid", r.EventName)
	assert.Equal(t, "nvidia.gpu.xid", r.Attrs["event.name"])
	assert.Equal(t, "ERROR", r.Severity, "every Xid here is a fault")
	assert.Equal(t, "gpu", r.Resource["hw.type"])
	assert.Equal(t, "nvidia", r.Resource["hw.vendor"])
	if w.hwID == "" {
		assert.NotContains(t, r.Resource, "hw.id", "a GPU NVML no longer lists keeps its bus id alone")
	} else {
		assert.Equal(t, w.hwID, r.Resource["hw.id"], "%v", r)
	}
	if w.pid == 0 {
		assert.NotContains(t, r.Attrs, "process.pid", "%v", r)
		assert.NotContains(t, r.Attrs, "process.executable.name", "%v", r)
	} else {
		assert.Equal(t, w.pid, r.Attrs["process.pid"], "%v", r)
		assert.Equal(t, w.name, r.Attrs["process.executable.name"], "%v", r)
	}
	assert.True(t, strings.HasPrefix(r.Body, w.body), "body %q starts with %q", r.Body, w.body)
}

// sortXids orders records by time, then code, so that a table can list them in order.
func sortXids(recs []record) {
	sort.SliceStable(recs, func(i, j int) bool {
		if !recs[i].Time.Equal(recs[j].Time) {
			return recs[i].Time.Before(recs[j].Time)
		}
		return recs[i].Attrs["nvidia.gpu.xid"].(int64) < recs[j].Attrs["nvidia.gpu.xid"].(int64)
	})
}

// waitForCounts polls the metrics output until nvidia.gpu.xid.errors reaches the counts
// given per GPU and code.
func waitForCounts(t *testing.T, c *collector, path string, want map[string]map[int64]float64) {
	t.Helper()
	e2eharness.WaitFor(t, 60*time.Second, c, "nvidia.gpu.xid.errors to count every Xid", func() bool {
		points := metricPoints(t, path)
		for hwID, codes := range want {
			for code, n := range codes {
				if v, ok := latest(points, "nvidia.gpu.xid.errors", hwID, map[string]any{"nvidia.gpu.xid": code}); !ok || v != n {
					return false
				}
			}
		}
		return true
	})
}

// bootTime is the wall-clock time the kernel's monotonic stamps count from, the way the
// receiver computes it (now − /proc/uptime).
func bootTime(t *testing.T) time.Time {
	t.Helper()
	data, err := os.ReadFile("/proc/uptime")
	require.NoError(t, err)
	secs, err := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	require.NoError(t, err)
	return time.Now().Add(-time.Duration(secs * float64(time.Second)))
}

const (
	xidGPU0 = "GPU-2f7c9a14-b3e8-4d05-8a61-c9e4f0d2b738"
	xidGPU1 = "GPU-6b0e3d58-19a4-4f7c-b2d6-e8a5c1f94037"
	xidGPU2 = "GPU-d4a81c6e-7f25-4b93-9e0a-3b6f2c8d5e19"

	replayGPU0 = "GPU-0a3f6c2e-8d17-4b59-a4e0-5c9b7d1f2e86"
	replayGPU1 = "GPU-7e1b4d93-2c68-4f0a-b5e7-91d3a6c8f024"
	replayGPU2 = "GPU-b59c2e07-4a3d-4e81-8f6b-d0e7a3c91b52"

	kernlogGPU1 = "GPU-41e8b2d6-a95c-4f17-8c3e-0b7d5a2f6c98"
)

// TestXid proves the Xid path through the distribution: the receiver's records
// and counters for simulated events from each source, a replay of real-looking kernel log
// records, and kernel lines that arrive as plain log lines. The three collectors start
// before the first subtest waits, so they run side by side.
func TestXid(t *testing.T) {
	t.Parallel()
	events := startCollector(t, classifierConfig(t, classifierOptions{scenario: testdata(t, "xid", "events.yaml")}))
	replay := startCollector(t, classifierConfig(t, classifierOptions{scenario: testdata(t, "xid", "replay-gpus.yaml")}))
	kernlog := startCollector(t, classifierConfig(t, classifierOptions{
		scenario: testdata(t, "xid", "kernlog-fault.yaml"),
		noXid:    true,
	}))

	t.Run("events", func(t *testing.T) { testXidEvents(t, events) })
	t.Run("kmsg_replay", func(t *testing.T) { testXidReplay(t, replay) })
	t.Run("kernel_lines_via_file_log", func(t *testing.T) { testXidKernelLines(t, kernlog) })
}

// testXidEvents: one record per occurrence whatever the source (an NVML event and a kernel
// line of one Xid merge into one record), with the GPU's resource, and the counters and
// reliability metrics of the same GPUs.
func testXidEvents(t *testing.T, c *collector) {
	logsPath, metricsPath := filepath.Join(c.dir, "logs.jsonl"), filepath.Join(c.dir, "metrics.jsonl")
	waitForRecords(t, c, logsPath, 60*time.Second, 5, "five Xid records", isXid)
	waitForCounts(t, c, metricsPath, map[string]map[int64]float64{
		xidGPU0: {31: 2}, xidGPU1: {13: 1}, xidGPU2: {48: 1, 63: 1},
	})
	c.stop(t) // flushes any event still waiting for its twin: a duplicate would show now

	xids := filter(logRecords(t, logsPath), isXid)
	require.Len(t, xids, 5, "one record per occurrence: %v", xids)
	sortXids(xids)
	fault31 := xidWant{code: 31, description: "GPU memory page fault", origin: "application", source: "both",
		hwID: xidGPU0, busID: "00000000:18:00.0", pid: 4301, name: "python3", body: "NVRM: Xid (PCI:0000:18:00): 31, pid=4301, name=python3"}
	wants := []xidWant{
		fault31,
		{code: 13, description: "Graphics Engine Exception", origin: "application", source: "nvml",
			hwID: xidGPU1, busID: "00000000:2A:00.0", body: "Xid 13 on GPU 00000000:2A:00.0"},
		{code: 48, description: "Double Bit ECC Error", origin: "hardware", source: "kmsg",
			hwID: xidGPU2, busID: "00000000:3A:00.0", body: "NVRM: Xid (PCI:0000:3a:00): 48, pid='<unknown>', name=<unknown>"},
		fault31,
		{code: 63, description: "GPU memory remapping event", origin: "hardware", source: "kmsg",
			hwID: xidGPU2, busID: "00000000:3A:00.0", pid: 4303, name: "python3", body: "NVRM: Xid (PCI:0000:3a:00): 63, pid=4303, name=python3"},
	}
	// 13 (NVML: stamped on arrival) and 48 (kernel: stamped by the scenario) share a second;
	// compare them as a set.
	if xids[1].Attrs["nvidia.gpu.xid"] == int64(48) {
		xids[1], xids[2] = xids[2], xids[1]
	}
	for i, w := range wants {
		checkXid(t, xids[i], w)
	}
	// The two occurrences of Xid 31 are the scenario's 3 s apart, stamped by the kernel line.
	gap := xids[3].Time.Sub(xids[0].Time)
	assert.InDelta(t, 3.0, gap.Seconds(), 0.5, "Xid 31 at 4 s and 7 s")

	points := metricPoints(t, metricsPath)
	value := func(metric, hwID string, attrs map[string]any) float64 {
		t.Helper()
		v, ok := latest(points, metric, hwID, attrs)
		assert.True(t, ok, "%s on %s with %v exported", metric, hwID, attrs)
		return v
	}
	assert.Equal(t, 2.0, value("nvidia.gpu.memory.remapped_rows", xidGPU0, map[string]any{"nvidia.gpu.remap.type": "correctable"}))
	assert.Equal(t, 1.0, value("nvidia.gpu.memory.remapped_rows", xidGPU0, map[string]any{"nvidia.gpu.remap.type": "uncorrectable"}))
	assert.Equal(t, 1.0, value("nvidia.gpu.memory.remapped_rows.pending", xidGPU0, nil))
	assert.Equal(t, 0.0, value("nvidia.gpu.memory.remapped_rows.failed", xidGPU0, nil))
	assert.Equal(t, 4.0, value("nvidia.gpu.memory.retired_pages", xidGPU2, map[string]any{"nvidia.gpu.retirement.cause": "single_bit_ecc"}))
	assert.Equal(t, 2.0, value("nvidia.gpu.memory.retired_pages", xidGPU2, map[string]any{"nvidia.gpu.retirement.cause": "double_bit_ecc"}))
	assert.Equal(t, 1.0, value("nvidia.gpu.memory.retired_pages.pending", xidGPU2, nil))
	assert.Equal(t, 1.0, value("nvidia.gpu.ecc.mode", xidGPU0, nil))
	assert.Equal(t, 0.0, value("nvidia.gpu.ecc.mode", xidGPU1, nil), "ECC disabled on GPU 1")
	assert.Equal(t, 17.0, value("hw.errors", xidGPU0, map[string]any{"error.type": "corrected", "hw.type": "gpu"}))
	assert.Equal(t, 1.0, value("hw.errors", xidGPU0, map[string]any{"error.type": "uncorrected", "hw.type": "gpu"}))
	assert.Equal(t, 120.0, value("hw.errors", xidGPU2, map[string]any{"error.type": "corrected", "hw.type": "gpu"}))
	assert.Equal(t, 3.0, value("hw.errors", xidGPU2, map[string]any{"error.type": "uncorrected", "hw.type": "gpu"}))
	_, counted := latest(points, "nvidia.gpu.xid.errors", xidGPU1, map[string]any{"nvidia.gpu.xid": int64(31)})
	assert.False(t, counted, "GPU 1 never saw Xid 31")
}

// testXidReplay appends testdata/xid/kmsg-replay.txt to the kernel log file the receiver
// reads. The simulator empties that file when it starts, so the replay is appended once the
// receiver runs, the way the kernel appends to its log.
func testXidReplay(t *testing.T, c *collector) {
	logsPath, metricsPath := filepath.Join(c.dir, "logs.jsonl"), filepath.Join(c.dir, "metrics.jsonl")
	e2eharness.WaitFor(t, 60*time.Second, c, "the receiver's first scrape", func() bool {
		_, ok := latest(metricPoints(t, metricsPath), "hw.gpu.memory.usage", replayGPU0, nil)
		return ok
	})
	replay, err := os.ReadFile(testdata(t, "xid", "kmsg-replay.txt"))
	require.NoError(t, err)
	f, err := os.OpenFile(filepath.Join(c.dir, "kmsg"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(replay)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	boot := bootTime(t)

	waitForRecords(t, c, logsPath, 60*time.Second, 6, "six Xid records from the replay", isXid)
	waitForCounts(t, c, metricsPath, map[string]map[int64]float64{
		replayGPU0: {31: 1}, replayGPU1: {13: 2}, replayGPU2: {48: 1, 63: 1},
	})
	c.stop(t)

	xids := filter(logRecords(t, logsPath), isXid)
	require.Len(t, xids, 6, "one record per Xid line; the two lines of Xid 79 are one occurrence: %v", xids)
	sortXids(xids)
	wants := []struct {
		usec int64
		xidWant
	}{
		{301234567, xidWant{code: 31, description: "GPU memory page fault", origin: "application", source: "kmsg",
			hwID: replayGPU0, busID: "00000000:18:00.0", pid: 42001, name: "python3",
			body: "NVRM: Xid (PCI:0000:18:00): 31, pid=42001, name=python3, Ch 00000008, intr 00000000. MMU Fault"}},
		{402345678, xidWant{code: 13, description: "Graphics Engine Exception", origin: "application", source: "kmsg",
			hwID: replayGPU1, busID: "00000000:2A:00.0", pid: 42077, name: "pt_main_thread",
			body: "NVRM: Xid (PCI:0000:2a:00): 13, pid=42077, name=pt_main_thread, Graphics SM Warp Exception"}},
		{402345701, xidWant{code: 13, description: "Graphics Engine Exception", origin: "application", source: "kmsg",
			hwID: replayGPU1, busID: "00000000:2A:00.0", pid: 42077, name: "pt_main_thread",
			body: "NVRM: Xid (PCI:0000:2a:00): 13, pid=42077, name=pt_main_thread, Graphics Exception: ESR"}},
		{503456789, xidWant{code: 48, description: "Double Bit ECC Error", origin: "hardware", source: "kmsg",
			hwID: replayGPU2, busID: "00000000:3A:00.0", body: "NVRM: Xid (PCI:0000:3a:00): 48, pid='<unknown>'"}},
		{503456850, xidWant{code: 63, description: "GPU memory remapping event", origin: "hardware",
			source: "kmsg", hwID: replayGPU2, busID: "00000000:3A:00.0", body: "NVRM: Xid (PCI:0000:3a:00): 63, pid='<unknown>'"}},
		// The numbered line and "GPU has fallen off the bus." merge; NVML does not list 9A.
		{604568012, xidWant{code: 79, description: "GPU has fallen off the bus", origin: "hardware", source: "kmsg",
			busID: "00000000:9A:00.0", body: "NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."}},
	}
	for i, w := range wants {
		checkXid(t, xids[i], w.xidWant)
		// The kernel's stamp (microseconds since boot) is the record's time.
		want := boot.Add(time.Duration(w.usec) * time.Microsecond)
		assert.WithinDuration(t, want, xids[i].Time, 2*time.Second, "Xid %d stamped from its kernel record", w.code)
	}
	for _, r := range logRecords(t, logsPath) {
		assert.True(t, isXid(r), "only Xid lines become records: %v", r)
	}
}

// testXidKernelLines: a dmesg line read by file_log is annotated by oom_classifier with the
// receiver's Xid attributes and counts as evidence: the OOM two seconds later on that GPU is
// a gpu_fault. Lines that are no Xid pass through untouched.
func testXidKernelLines(t *testing.T, c *collector) {
	logsPath := filepath.Join(c.dir, "logs.jsonl")
	ooms := waitForRecords(t, c, logsPath, 60*time.Second, 1, "the classified OOM record", isOOM)
	c.stop(t)

	recs := logRecords(t, logsPath)
	xids := filter(recs, isXid)
	require.Len(t, xids, 1, "the Xid line, annotated")
	x := xids[0]
	assert.Equal(t, int64(94), x.Attrs["nvidia.gpu.xid"])
	assert.Equal(t, "Contained memory error", x.Attrs["nvidia.gpu.xid.description"])
	assert.Equal(t, "hardware", x.Attrs["nvidia.gpu.xid.origin"])
	assert.Equal(t, "ROBUST_CHANNEL_CONTAINED_ERROR", x.Attrs["nvidia.gpu.xid.mnemonic"])
	assert.Equal(t, "RESTART_APP", x.Attrs["nvidia.gpu.xid.action"])
	assert.Equal(t, "00000000:2A:00.0", x.Attrs["nvidia.gpu.pci.bus_id"])
	assert.Equal(t, int64(5301), x.Attrs["process.pid"])
	assert.Equal(t, "python3", x.Attrs["process.executable.name"])
	assert.Equal(t, "kern.log", x.Attrs["log.file.name"])
	assert.True(t, strings.HasPrefix(x.Body, "[ 5012.345678] NVRM: Xid (PCI:0000:2a:00): 94"), "body untouched: %q", x.Body)

	plain := filter(recs, func(r record) bool { return strings.Contains(r.Body, "AER: can't recover") })
	require.Len(t, plain, 1)
	assert.Equal(t, map[string]any{"log.file.name": "kern.log"}, plain[0].Attrs, "a line that is no Xid is left as it came")

	require.Len(t, ooms, 1)
	o := ooms[0]
	t.Logf("kernel-line OOM: cause=%v contributing=%v confidence=%v evidence: %v", o.Attrs["gpu.oom.cause"],
		o.Attrs["gpu.oom.contributing_causes"], o.Attrs["gpu.oom.confidence"], o.Attrs["gpu.oom.evidence"])
	assert.Equal(t, "gpu_fault", o.Attrs["gpu.oom.cause"])
	assert.Equal(t, kernlogGPU1, o.Attrs["hw.id"])
	assert.Contains(t, o.Attrs["gpu.oom.evidence"], "Xid 94")
	assert.Equal(t, gib(12), o.Attrs["gpu.oom.requested_bytes"])
}

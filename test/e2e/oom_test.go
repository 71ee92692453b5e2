//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oomCase is one scenario of testdata/scenarios/causes and what the classifier must say.
type oomCase struct {
	cause      string // the expected gpu.oom.cause, and the scenario file name unless scenario is set
	scenario   string // file name without .yaml when it is not the cause's
	interval   string
	thresholds map[string]string
	hwID       string // the GPU the OOM happened on
	framework  string
	bytes      map[string]int64 // gpu.oom.* byte attributes, as the message prints them
	ints       map[string]int64 // other int attributes
	others     []any            // gpu.oom.other_processes, when the message names any
	// contributing is the exact gpu.oom.contributing_causes where the scenario has several
	// causes; nil leaves it unchecked.
	contributing []any
	gpuIndex     int64 // nvidia.gpu.index of the matched GPU (a MIG instance carries its parent's)
	records      int   // when set, how many records the application's log file must yield
}

func (tc oomCase) file() string {
	if tc.scenario != "" {
		return tc.scenario
	}
	return tc.cause
}

// shortLeak is what the compressed leak scenarios need: 500 ms scrapes and a 10 s minimum.
var shortLeak = map[string]string{"leak_min_duration": "10s"}

var oomCases = []oomCase{
	{
		cause: "gpu_fault", hwID: "GPU-7a2d4c91-e05b-4f38-b1c6-2e9d8f7a6b54", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(3), "gpu.oom.total_bytes": gib(79.15), "gpu.oom.free_bytes": gib(2.15),
			"gpu.oom.allocated_bytes": gib(75.40), "gpu.oom.reserved_bytes": gib(75.40) + mib(920),
			"gpu.oom.process_bytes": gib(77),
		},
		ints:     map[string]int64{"gpu.oom.device_index": 1},
		gpuIndex: 1,
	},
	{
		cause: "zombie_context", hwID: "GPU-b8e14f06-3c27-4d9a-8e51-6a0f2d7c9b34", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(6), "gpu.oom.free_bytes": gib(4.15),
			"gpu.oom.allocated_bytes": gib(53.40), "gpu.oom.reserved_bytes": gib(53.40) + gib(1.05),
			"gpu.oom.process_bytes": gib(55),
		},
	},
	{
		cause: "other_tenant", hwID: "GPU-1d6a9e37-52cb-4f80-a3e4-97b2c5d8e016", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(8), "gpu.oom.free_bytes": gib(5.15),
			"gpu.oom.allocated_bytes": gib(36.20), "gpu.oom.reserved_bytes": gib(36.20) + gib(1.30),
			"gpu.oom.process_bytes": gib(38),
		},
		others: []any{map[string]any{"process.pid": int64(9202), "bytes": gib(36)}},
	},
	{
		cause: "worker_context_overhead", hwID: "GPU-5e8f0a2b-7c14-4d39-9f6e-b2a4c8d1e370", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(10), "gpu.oom.free_bytes": gib(8.40),
			"gpu.oom.allocated_bytes": gib(60.20), "gpu.oom.reserved_bytes": gib(60.20) + gib(1.25),
			"gpu.oom.process_bytes": gib(62),
		},
	},
	{
		cause: "fragmentation", hwID: "GPU-e2c7b5d9-14f6-4a08-8d3b-f1a9c6e2d745", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(2.50), "gpu.oom.total_bytes": gib(39.50), "gpu.oom.free_bytes": gib(1),
			"gpu.oom.allocated_bytes": gib(26.10), "gpu.oom.reserved_bytes": gib(26.10) + gib(11.80),
			"gpu.oom.process_bytes": gib(38.50),
		},
	},
	{
		// A 16 s leak: 500 ms scrapes give the rule its 20 points, and the user-facing
		// threshold leak_min_duration (default 2m) is lowered to 10s for this short job.
		cause: "memory_leak", interval: "500ms", thresholds: shortLeak,
		hwID: "GPU-4b9d2e6f-0a71-4c3e-95b8-d7e1f3a2c068", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(4), "gpu.oom.free_bytes": gib(3.15),
			"gpu.oom.allocated_bytes": gib(74.20), "gpu.oom.reserved_bytes": gib(74.20) + gib(1.10),
			"gpu.oom.process_bytes": gib(76),
		},
	},
	{
		cause: "capacity_loss", hwID: "GPU-c6f3a8d1-2e95-4b07-8c4a-5d9e0b1f7a23", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(2), "gpu.oom.total_bytes": gib(75.67), "gpu.oom.free_bytes": mib(688),
			"gpu.oom.allocated_bytes": gib(73.90), "gpu.oom.reserved_bytes": gib(73.90) + mib(612),
			"gpu.oom.process_bytes": gib(75),
		},
	},
	{
		// The message's ordinal (0, CUDA_VISIBLE_DEVICES numbering) is not NVML's index (1):
		// only the pid can match it to the right GPU.
		cause: "workload_too_large", hwID: "GPU-8a5f1d3c-9b6e-4720-a4d8-e3c2b1f09a56", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(3.50), "gpu.oom.free_bytes": gib(1.15),
			"gpu.oom.allocated_bytes": gib(77.10), "gpu.oom.reserved_bytes": gib(77.10) + mib(410),
			"gpu.oom.process_bytes": gib(78),
		},
		ints:     map[string]int64{"gpu.oom.device_index": 0},
		gpuIndex: 1,
	},
	{
		cause: "unknown", hwID: "GPU-f19a0c4e-6d37-4b82-a1e5-c0b7d9f3e864", framework: "jax",
		bytes: map[string]int64{"gpu.oom.requested_bytes": 17179869184},
	},

	// Messy fleets (testdata/scenarios/causes/README.md says why each is realistic).
	{
		cause: "worker_context_overhead", scenario: "worker_context_ddp_ranks", framework: "pytorch",
		hwID:  "GPU-f29fd4f2-bb86-4631-a794-604218d696c4",
		bytes: map[string]int64{"gpu.oom.requested_bytes": gib(8), "gpu.oom.free_bytes": gib(5.67), "gpu.oom.process_bytes": gib(64)},
	},
	{
		cause: "worker_context_overhead", scenario: "worker_context_bare_dataloader", framework: "pytorch",
		hwID:  "GPU-530b4328-f3d3-41ff-aec1-db98dd4465bf",
		bytes: map[string]int64{"gpu.oom.requested_bytes": gib(10), "gpu.oom.free_bytes": gib(7.95), "gpu.oom.process_bytes": gib(58)},
	},
	{
		cause: "workload_too_large", scenario: "mig_workload_too_large", framework: "pytorch",
		hwID:         "MIG-93ed8b7b-4fbd-4be3-aab7-825488d2e49b",
		bytes:        map[string]int64{"gpu.oom.requested_bytes": gib(2), "gpu.oom.total_bytes": gib(39), "gpu.oom.free_bytes": mib(512)},
		contributing: []any{},
	},
	{
		cause: "workload_too_large", scenario: "mig_isolated_neighbour", framework: "pytorch",
		hwID:         "MIG-a0dd332f-07a7-4555-a731-51ab2a4a2ec2",
		bytes:        map[string]int64{"gpu.oom.requested_bytes": mib(1536), "gpu.oom.total_bytes": gib(9.75), "gpu.oom.free_bytes": mib(784)},
		contributing: []any{},
	},
	{
		cause: "other_tenant", scenario: "mig_shared_instance", framework: "pytorch",
		hwID:   "MIG-b6ec7537-8418-4327-a357-6a8c8c2bcf5c",
		bytes:  map[string]int64{"gpu.oom.requested_bytes": gib(8), "gpu.oom.total_bytes": gib(39), "gpu.oom.free_bytes": gib(3)},
		others: []any{map[string]any{"process.pid": int64(8401), "bytes": gib(6)}},
	},
	{
		cause: "other_tenant", scenario: "timesliced_same_image", framework: "pytorch",
		hwID:  "GPU-11312b29-36f8-4c85-a605-4db3633b2f8a",
		bytes: map[string]int64{"gpu.oom.requested_bytes": gib(2), "gpu.oom.free_bytes": mib(1018), "gpu.oom.process_bytes": gib(6)},
	},
	{
		cause: "other_tenant", scenario: "timesliced_small_pods", framework: "pytorch",
		hwID:         "GPU-fccf97fb-cbd1-427f-abce-ef4c14539c35",
		bytes:        map[string]int64{"gpu.oom.requested_bytes": mib(1536), "gpu.oom.free_bytes": mib(806), "gpu.oom.process_bytes": gib(14)},
		contributing: []any{},
	},
	{
		cause: "memory_leak", scenario: "mixed_leak_tenant", interval: "500ms", thresholds: shortLeak, framework: "pytorch",
		hwID:         "GPU-9aadc4ee-9d39-418c-a65a-505214c3906b",
		bytes:        map[string]int64{"gpu.oom.requested_bytes": gib(8), "gpu.oom.free_bytes": gib(5.15), "gpu.oom.process_bytes": gib(62)},
		contributing: []any{"other_tenant"},
	},
	{
		cause: "memory_leak", scenario: "mixed_leak_fragmentation", interval: "500ms", thresholds: shortLeak, framework: "pytorch",
		hwID: "GPU-c663dc56-8aa7-490e-aa25-f15164ca1875",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(8), "gpu.oom.free_bytes": gib(7.15),
			"gpu.oom.allocated_bytes": gib(56), "gpu.oom.reserved_bytes": gib(71.5),
		},
		contributing: []any{"fragmentation"},
	},
	{
		cause: "other_tenant", scenario: "mixed_zombie_tenant", framework: "pytorch",
		hwID:         "GPU-a65f8460-de3f-41b0-a440-bda448c64bdf",
		bytes:        map[string]int64{"gpu.oom.requested_bytes": gib(8), "gpu.oom.free_bytes": gib(5.15), "gpu.oom.process_bytes": gib(48)},
		contributing: []any{"zombie_context"},
	},
	{
		// One message over six records: only stitching gives the head its numbers.
		cause: "fragmentation", scenario: "split_fragmentation", framework: "pytorch",
		hwID: "GPU-f7572d68-7075-44a2-a899-485ed8844c3b",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(2.50), "gpu.oom.total_bytes": gib(39.50), "gpu.oom.free_bytes": gib(1),
			"gpu.oom.allocated_bytes": gib(26.10), "gpu.oom.reserved_bytes": gib(26.10) + gib(11.80),
			"gpu.oom.process_bytes": gib(38.50),
		},
		records: 6,
	},
}

// TestOOMCauses runs the distribution once per cause scenario (gpu_mem simulated and
// file_log into oom_classifier in both pipelines) and checks the classified OOM record in the
// file exporter's output: cause, matched GPU, framework and the parsed numbers.
//
// Every collector starts before the first subtest waits: the collectors run side by side
// whatever go test's -parallel (GOMAXPROCS by default, 2 here), and the subtests then only
// read their outputs in turn.
func TestOOMCauses(t *testing.T) {
	t.Parallel()
	collectors := make([]*collector, len(oomCases))
	for i, tc := range oomCases {
		collectors[i] = startCollector(t, classifierConfig(t, classifierOptions{
			scenario:   testdata(t, "scenarios", "causes", tc.file()+".yaml"),
			interval:   tc.interval,
			thresholds: tc.thresholds,
		}))
	}
	byCause := map[string]*tally{}
	t.Cleanup(func() { logAccuracy(t, byCause) })
	for i, tc := range oomCases {
		c := collectors[i]
		t.Run(tc.file(), func(t *testing.T) {
			logsPath := filepath.Join(c.dir, "logs.jsonl")
			ooms := waitForRecords(t, c, logsPath, 90*time.Second, 1, "the classified OOM record", isOOM)
			require.Len(t, ooms, 1, "one OOM line, one record")
			r := ooms[0]
			t.Logf("%s: cause=%v contributing=%v confidence=%v\n  evidence: %v\n  recommendation: %v",
				tc.cause, r.Attrs["gpu.oom.cause"], r.Attrs["gpu.oom.contributing_causes"], r.Attrs["gpu.oom.confidence"],
				r.Attrs["gpu.oom.evidence"], r.Attrs["gpu.oom.recommendation"])

			tl := byCause[tc.cause]
			if tl == nil {
				tl = &tally{}
				byCause[tc.cause] = tl
			}
			tl.all++
			if r.Attrs["gpu.oom.cause"] == tc.cause {
				tl.right++
			}
			assert.Equal(t, tc.cause, r.Attrs["gpu.oom.cause"], "evidence: %v", r.Attrs["gpu.oom.evidence"])
			if tc.contributing != nil {
				got, _ := r.Attrs["gpu.oom.contributing_causes"].([]any)
				if got == nil {
					got = []any{}
				}
				assert.Equal(t, tc.contributing, got, "contributing causes")
			}
			if tc.cause != "unknown" {
				idx, ok := attrInt(r.Attrs, "nvidia.gpu.index")
				assert.True(t, ok, "nvidia.gpu.index on the classified record")
				assert.Equal(t, tc.gpuIndex, idx, "nvidia.gpu.index")
			}
			assert.Equal(t, tc.hwID, r.Attrs["hw.id"], "matched GPU")
			assert.Equal(t, tc.framework, r.Attrs["gpu.oom.framework"])
			for k, want := range tc.bytes {
				got, ok := attrInt(r.Attrs, k)
				if assert.True(t, ok, "%s present as int", k) {
					assert.Equal(t, want, got, k)
				}
			}
			for k, want := range tc.ints {
				got, ok := attrInt(r.Attrs, k)
				if assert.True(t, ok, "%s present as int", k) {
					assert.Equal(t, want, got, k)
				}
			}
			if tc.others != nil {
				assert.Equal(t, tc.others, r.Attrs["gpu.oom.other_processes"])
			}
			assert.Contains(t, []any{"high", "medium", "low"}, r.Attrs["gpu.oom.confidence"])
			assert.NotEmpty(t, r.Attrs["gpu.oom.evidence"])
			assert.NotEmpty(t, r.Attrs["gpu.oom.recommendation"])
			// The record is the application's line, enriched: the body is untouched.
			assert.Contains(t, strings.ToLower(r.Body), "out of memory")
			assert.Contains(t, r.Attrs, "log.file.name", "the record came through file_log")
			if tc.records > 0 {
				n := 0
				for _, rec := range logRecords(t, logsPath) {
					if rec.Attrs["log.file.name"] == r.Attrs["log.file.name"] {
						n++
					}
				}
				assert.Equal(t, tc.records, n, "every line of the file passed through")
			}

			// The metrics pipeline ran through the same processor: the matched GPU's memory
			// reached the metrics exporter unchanged.
			c.stop(t)
			points := metricPoints(t, filepath.Join(c.dir, "metrics.jsonl"))
			_, ok := latest(points, "hw.gpu.memory.usage", tc.hwID, nil)
			assert.True(t, ok, "hw.gpu.memory.usage of %s exported", tc.hwID)
			// A second read after a clean stop still holds exactly one OOM record.
			assert.Len(t, filter(logRecords(t, logsPath), isOOM), 1)
		})
	}
}

// tally counts the scenarios of one expected cause and those classified as it.
type tally struct{ right, all int }

// logAccuracy prints the per-cause accuracy of TestOOMCauses.
func logAccuracy(t *testing.T, byCause map[string]*tally) {
	causes := make([]string, 0, len(byCause))
	for c := range byCause {
		causes = append(causes, c)
	}
	slices.Sort(causes)
	var b strings.Builder
	b.WriteString("accuracy per cause:\n| cause | right | scenarios |\n|---|---|---|\n")
	for _, c := range causes {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", c, byCause[c].right, byCause[c].all)
	}
	t.Log(b.String())
}

// TestOOMLogsPipelineOnly: a user who puts oom_classifier only in the logs pipeline is told
// once at start, and the OOM's unknown evidence names the missing metrics side.
func TestOOMLogsPipelineOnly(t *testing.T) {
	t.Parallel()
	cfg := strings.Replace(classifierConfig(t, classifierOptions{
		scenario: testdata(t, "scenarios", "causes", "worker_context_overhead.yaml"),
	}), "      processors: [oom_classifier]\n      exporters: [file/metrics]", "      exporters: [file/metrics]", 1)
	require.Contains(t, cfg, "      receivers: [gpu_mem]\n      exporters: [file/metrics]", "metrics pipeline without the processor")
	c := startCollector(t, cfg)
	logsPath := filepath.Join(c.dir, "logs.jsonl")
	ooms := waitForRecords(t, c, logsPath, 90*time.Second, 1, "the OOM record", isOOM)
	c.stop(t)
	require.Len(t, ooms, 1)
	r := ooms[0]
	assert.Equal(t, "unknown", r.Attrs["gpu.oom.cause"])
	assert.Contains(t, r.Attrs["gpu.oom.evidence"], "the processor is in no metrics pipeline")
	assert.NotContains(t, r.Attrs, "hw.id")
	assert.Equal(t, 1, strings.Count(c.Output(), "oom_classifier is in a logs pipeline only"), "warned once:\n%s", c.Output())
}

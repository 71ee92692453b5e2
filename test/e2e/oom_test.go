//go:build e2e

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oomCase is one scenario of testdata/scenarios/causes and what the classifier must say.
type oomCase struct {
	cause      string // scenario file name and the expected gpu.oom.cause
	interval   string
	thresholds map[string]string
	hwID       string // the GPU the OOM happened on
	framework  string
	bytes      map[string]int64 // gpu.oom.* byte attributes, as the message prints them
	ints       map[string]int64 // other int attributes
	others     []any            // gpu.oom.other_processes, when the message names any
}

var oomCases = []oomCase{
	{
		cause: "gpu_fault", hwID: "GPU-7a2d4c91-e05b-4f38-b1c6-2e9d8f7a6b54", framework: "pytorch",
		bytes: map[string]int64{
			"gpu.oom.requested_bytes": gib(3), "gpu.oom.total_bytes": gib(79.15), "gpu.oom.free_bytes": gib(2.15),
			"gpu.oom.allocated_bytes": gib(75.40), "gpu.oom.reserved_bytes": gib(75.40) + mib(920),
			"gpu.oom.process_bytes": gib(77),
		},
		ints: map[string]int64{"gpu.oom.device_index": 1},
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
		cause: "memory_leak", interval: "500ms", thresholds: map[string]string{"leak_min_duration": "10s"},
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
		ints: map[string]int64{"gpu.oom.device_index": 0},
	},
	{
		cause: "unknown", hwID: "GPU-f19a0c4e-6d37-4b82-a1e5-c0b7d9f3e864", framework: "jax",
		bytes: map[string]int64{"gpu.oom.requested_bytes": 17179869184},
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
			scenario:   testdata(t, "scenarios", "causes", tc.cause+".yaml"),
			interval:   tc.interval,
			thresholds: tc.thresholds,
		}))
	}
	for i, tc := range oomCases {
		c := collectors[i]
		t.Run(tc.cause, func(t *testing.T) {
			logsPath := filepath.Join(c.dir, "logs.jsonl")
			ooms := waitForRecords(t, c, logsPath, 90*time.Second, 1, "the classified OOM record", isOOM)
			require.Len(t, ooms, 1, "one OOM line, one record")
			r := ooms[0]
			t.Logf("%s: cause=%v contributing=%v confidence=%v\n  evidence: %v\n  recommendation: %v",
				tc.cause, r.Attrs["gpu.oom.cause"], r.Attrs["gpu.oom.contributing_causes"], r.Attrs["gpu.oom.confidence"],
				r.Attrs["gpu.oom.evidence"], r.Attrs["gpu.oom.recommendation"])

			assert.Equal(t, tc.cause, r.Attrs["gpu.oom.cause"], "evidence: %v", r.Attrs["gpu.oom.evidence"])
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

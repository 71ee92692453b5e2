package oomclassifier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/diagnose"
)

// skewedOOM: pid 3101 holds 78 GiB of an 80 GiB GPU, 1 GiB free, and asks for 4 GiB more.
const skewedOOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free. Process 3101 has 78.00 GiB memory in use. Of the allocated memory 76.50 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated."

// feedTenantLeaves sends 96 s of an 80 GiB GPU on host n: pid 3101 (ml/trainer-1) holds 38 GiB
// beside pid 4242 (another tenant, serving/inference-0) with 40 GiB until 4242 leaves at second 85; from second 87 3101
// holds 78 GiB. Its OOM happens at second 90.
func feedTenantLeaves(t *testing.T, p processors) {
	t.Helper()
	a := podOf(1)
	b := kpod{uid: "uid-inference", ns: "serving", name: "inference-0", container: "server", cid: "d7" + strings.Repeat("beef", 15) + "ad"}
	g := kgpu{hwID: "GPU-0", bus: "00000000:3B:00.0", model: "NVIDIA H100 80GB HBM3", total: 80 * gib,
		procs: []kproc{
			{pid: 3101, pod: a, bytes: func(s int) int64 {
				if s >= 87 {
					return 78 * gib
				}
				return 38 * gib
			}},
		}}
	tenant := kproc{pid: 4242, pod: b, bytes: flatBytes(40 * gib)}
	feedNode(t, p, "n", 85, kgpu{hwID: g.hwID, bus: g.bus, model: g.model, total: g.total, procs: append(g.procs[:1:1], tenant)})
	for s := 85; s < 96; s++ {
		feedAt(t, p, "n", s, g)
	}
}

// TestSkewedStampClassifiedWhereTheMessageAgrees: the OOM happened at second 90, just after
// the other tenant left, but a log clock 30 s behind stamped it at second 60, when the tenant
// still held 40 GiB. The message's own figures (3101 held 78 GiB) contradict the window there
// (38 GiB) and agree from second 87: it is classified there, workload_too_large, and says so.
// Today it is other_tenant, high.
func TestSkewedStampClassifiedWhereTheMessageAgrees(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedTenantLeaves(t, p)
	a := classified(t, p, logsWith("n", t0.Add(60*time.Second), text(skewedOOM)))
	assert.Equal(t, classify.CauseWorkloadTooLarge, a[attrCause], "evidence: %v", a[attrEvidence])
	assert.Equal(t, classify.ConfidenceHigh, a[attrConfidence], "evidence: %v", a[attrEvidence])
	assert.Nil(t, a[attrContributing], "the tenant had left: %v", a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "The message's own figures (pid 3101 holding 78.0 GiB, 1.0 GiB free) contradict GPU-0 at the record's timestamp, 2025-03-01T12:01:00Z (pid 3101 holding 38.0 GiB, 1.5 GiB free) and match it 27s later, at 2025-03-01T12:01:27Z, where the OOM was classified: the log's clock is taken as skewed by that much.")
}

// TestSkewedStampWithoutAgreementLowersConfidence: with skew_search 20 s the moment the
// message describes is out of reach: the stamp's classification stands, doubted, and says why.
func TestSkewedStampWithoutAgreementLowersConfidence(t *testing.T) {
	cfg := testConfig(0)
	cfg.Thresholds.SkewSearch = 20 * time.Second
	p := newProcessors(t, cfg, nopSettings())
	feedTenantLeaves(t, p)
	a := classified(t, p, logsWith("n", t0.Add(60*time.Second), text(skewedOOM)))
	assert.Equal(t, classify.ConfidenceLow, a[attrConfidence], "evidence: %v", a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "contradict GPU-0 at the record's timestamp, 2025-03-01T12:01:00Z (pid 3101 holding 38.0 GiB, 1.5 GiB free) and at every moment the window holds within 20s of it: the state classified may not be the OOM's, so the confidence was lowered.")
}

// TestHonestStampIsNotMoved: stamped at its real moment, the message agrees with the window:
// nothing is searched or said, and the cause is the same.
func TestHonestStampIsNotMoved(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedTenantLeaves(t, p)
	a := classified(t, p, logsWith("n", t0.Add(90*time.Second), text(skewedOOM)))
	assert.Equal(t, classify.CauseWorkloadTooLarge, a[attrCause], "evidence: %v", a[attrEvidence])
	assert.Equal(t, classify.ConfidenceHigh, a[attrConfidence], "evidence: %v", a[attrEvidence])
	assert.NotContains(t, a[attrEvidence], "own figures")
}

// feedAt sends one collection of the host's GPUs at second sec.
func feedAt(t *testing.T, p processors, host string, sec int, gpus ...kgpu) {
	t.Helper()
	md := pmetric.NewMetrics()
	for _, g := range gpus {
		g.appendTo(md, host, sec)
	}
	require.NoError(t, p.metrics.ConsumeMetrics(context.Background(), md))
}

// TestSkewCheckReusesPooledBuffers: a moved classification, an honest one and a doubted one,
// interleaved through the pooled buffers, each give what they give alone.
func TestSkewCheckReusesPooledBuffers(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	feedTenantLeaves(t, p)
	inst := p.logs.(*logsProcessor).inst
	oom := func(sec int) oomRecord {
		ld := logsWith("n", t0.Add(time.Duration(sec)*time.Second), text(skewedOOM))
		o, ok := findOOM(firstRecord(ld), ld.ResourceLogs().At(0).Resource().Attributes())
		require.True(t, ok)
		return o
	}
	// Moved 27 s, honest, out of reach (second 87 is 67 s away), moved again.
	cases := []oomRecord{oom(60), oom(90), oom(20), oom(60)}
	var alone []classify.Result
	for _, o := range cases {
		alone = append(alone, classifyOOM(o, inst))
		diagnose.ResetPool() // nothing reused
	}
	for round := 0; round < 3; round++ {
		for i, o := range cases {
			o.rec.Attributes().Clear()
			require.Equal(t, alone[i], classifyOOM(o, inst), "round %d, OOM %d", round, i)
		}
	}
	assert.Contains(t, alone[0].Evidence, "27s later")
	assert.Contains(t, alone[2].Evidence, "so the confidence was lowered")
}

package oomclassifier

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/classify"
)

// TestOOMStampedLongAgoFallsBackToObserved: a record stamped in 1970 (a clock never set) or
// on 2001-09-09 (10^9 seconds: a wrong unit) is placed at its observed time, like one stamped
// far ahead, matched to its GPU there, and the evidence says so.
func TestOOMStampedLongAgoFallsBackToObserved(t *testing.T) {
	for _, stamp := range []time.Time{time.Unix(42, 0), time.Unix(1e9, 0)} {
		t.Run(stamp.UTC().Format(time.DateOnly), func(t *testing.T) {
			clk := newFakeClock(t0.Add(300 * time.Second))
			p := newProcessorsClock(t, testConfig(0), nopSettings(), clk)
			leakFor(t, p)
			ld := logsWith("n", stamp, text(pytorchOOM))
			firstRecord(ld).SetObservedTimestamp(pcommon.NewTimestampFromTime(t0.Add(299 * time.Second)))
			require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
			a := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
			assert.Equal(t, "GPU-0", a[attrHWID], "evidence: %v", a[attrEvidence])
			assert.Equal(t, classify.CauseMemoryLeak, a[attrCause], "evidence: %v", a[attrEvidence])
			assert.Contains(t, a[attrEvidence], "The record's timestamp ("+stamp.UTC().Format(time.RFC3339)+
				") is implausibly old (before 2020-01-01: a clock never set or a wrong unit); it was placed at its observed time (2025-03-01T12:04:59Z).")
		})
	}
}

// TestOOMStampedLongAgoWithoutObservedUsesNow: with no believable observed time either, the
// record is placed at the collector's time of receipt.
func TestOOMStampedLongAgoWithoutObservedUsesNow(t *testing.T) {
	clk := newFakeClock(t0.Add(300 * time.Second))
	p := newProcessorsClock(t, testConfig(0), nopSettings(), clk)
	leakFor(t, p)
	ld := logsWith("n", time.Unix(42, 0), text(pytorchOOM))
	firstRecord(ld).SetObservedTimestamp(pcommon.NewTimestampFromTime(time.Unix(43, 0)))
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
	a := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, "GPU-0", a[attrHWID], "evidence: %v", a[attrEvidence])
	assert.Contains(t, a[attrEvidence], "it was placed at the collector's time of receipt (2025-03-01T12:05:00Z).")
}

// TestReplayKeepsItsOwnTime: a record two hours old is history, not a wrong clock: it keeps
// its time, matches no GPU (the window no longer holds that moment), and says so, at low
// confidence although its message alone decides a cause.
func TestReplayKeepsItsOwnTime(t *testing.T) {
	clk := newFakeClock(t0.Add(300 * time.Second))
	p := newProcessorsClock(t, testConfig(0), nopSettings(), clk)
	leakFor(t, p)
	ld := logsWith("n", t0.Add(-2*time.Hour), text(fullOOM))
	firstRecord(ld).SetObservedTimestamp(pcommon.NewTimestampFromTime(t0.Add(299 * time.Second)))
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), ld))
	a := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, classify.MatchedByNone, a[attrMatch])
	assert.Equal(t, classify.ConfidenceLow, a[attrConfidence], "evidence: %v", a[attrEvidence])
	assert.NotContains(t, a[attrEvidence], "placed at")
	assert.Contains(t, a[attrEvidence], `no GPU was matched (the OOM's time is more than 15m0s before the newest GPU metrics of host "n": the window no longer holds that moment`)
}

// TestNoGPUMatchedIsLowAndSaysSo: a cause read from the message alone, with no GPU matched,
// is low confidence and the evidence says which GPU check failed.
func TestNoGPUMatchedIsLowAndSaysSo(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	flatGPU(t, p) // host n only
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("m", t0.Add(25*time.Second), text(fullOOM))))
	a := firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()
	assert.Equal(t, classify.CauseWorkloadTooLarge, a[attrCause], "evidence: %v", a[attrEvidence])
	assert.Equal(t, classify.ConfidenceLow, a[attrConfidence], "evidence: %v", a[attrEvidence])
	assert.Equal(t, classify.MatchedByNone, a[attrMatch])
	assert.Contains(t, a[attrEvidence], `; no GPU was matched (no GPU metrics have arrived for host "m"), so only the message's own numbers were checked.`)
}

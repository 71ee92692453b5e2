package oomclassifier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
)

// bodyOf is the first record's body, to tell batches apart in the sink.
func bodyOf(ld plog.Logs) string { return firstRecord(ld).Body().AsString() }

func TestDecisionWaitHoldsInOrder(t *testing.T) {
	const wait = 300 * time.Second // on the fake clock: the test does not sleep
	clk := newFakeClock(t0)
	p := newProcessorsClock(t, testConfig(wait), nopSettings(), clk)
	ctx := context.Background()
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0, text(pytorchOOM))))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0, text("after the OOM"))))
	assert.Equal(t, 0, p.lsink.LogRecordCount(), "the OOM waits for metrics, the next batch waits behind it")

	waitForTimer(t, clk)
	clk.Advance(wait - time.Millisecond)
	waitForTimer(t, clk)
	assert.Equal(t, 0, p.lsink.LogRecordCount(), "not due yet")
	clk.Advance(time.Millisecond)
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == 2 }, 5*time.Second, time.Millisecond)
	all := p.lsink.AllLogs()
	assert.Contains(t, bodyOf(all[0]), "CUDA out of memory")
	assert.Equal(t, "after the OOM", bodyOf(all[1]))
	assert.Contains(t, firstRecord(all[0]).Attributes().AsRaw(), attrCause, "classified with what was there")

	// With the queue empty again, a batch without an OOM goes straight through.
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", t0, text("later"))))
	assert.Equal(t, 3, p.lsink.LogRecordCount())
}

// waitForTimer waits until the worker has armed its timer on clk, so that an Advance after it
// is seen.
func waitForTimer(t *testing.T, clk *fakeClock) {
	t.Helper()
	require.Eventually(t, func() bool { return clk.Timers() > 0 }, 5*time.Second, time.Millisecond)
}

func TestMetricsCoveringTheOOMReleaseItEarly(t *testing.T) {
	p := newProcessors(t, testConfig(time.Hour), nopSettings())
	ctx := context.Background()
	g := gpuMetrics{host: "n", hwID: "GPU-a", at: t0, used: 39 * gib, total: 40 * gib, procs: map[int64]int64{3101: 39 * gib}}
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(g)))
	oomAt := t0.Add(500 * time.Millisecond)
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", oomAt, text(pytorchOOM))))
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, 0, p.lsink.LogRecordCount(), "metrics only reach 0 s, the OOM is at 0.5 s")

	g.at = t0.Add(time.Second)
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(g)))
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, "GPU-a", firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()[attrHWID])

	// Already covered: classified in the call, no wait.
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("n", oomAt, text(pytorchOOM))))
	assert.Equal(t, 2, p.lsink.LogRecordCount())
}

func TestShutdownFlushesHeldBatches(t *testing.T) {
	sink := new(consumertest.LogsSink)
	lp, err := NewFactory().CreateLogs(context.Background(), nopSettings(), testConfig(time.Hour), sink)
	require.NoError(t, err)
	require.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
	ctx, cancel := context.WithCancel(context.Background())
	for i := 0; i < 5; i++ {
		require.NoError(t, lp.ConsumeLogs(ctx, logsWith("n", t0, text(pytorchOOM))))
		require.NoError(t, lp.ConsumeLogs(ctx, logsWith("n", t0, text("plain"))))
	}
	cancel() // the callers' contexts ending must not lose held batches
	assert.Equal(t, 0, sink.LogRecordCount())
	require.NoError(t, lp.Shutdown(context.Background()))
	require.Equal(t, 10, sink.LogRecordCount())
	for i, ld := range sink.AllLogs() {
		if i%2 == 0 {
			assert.Contains(t, firstRecord(ld).Attributes().AsRaw(), attrCause)
		} else {
			assert.Equal(t, "plain", bodyOf(ld))
		}
	}
	// After shutdown nothing is held or lost: records are classified in the call.
	require.NoError(t, lp.ConsumeLogs(context.Background(), logsWith("n", t0, text(pytorchOOM))))
	assert.Equal(t, 11, sink.LogRecordCount())
}

func TestDecisionWaitZeroClassifiesInTheCall(t *testing.T) {
	p := newProcessors(t, testConfig(0), nopSettings())
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), logsWith("n", t0, text(pytorchOOM))))
	assert.Equal(t, 1, p.lsink.LogRecordCount())
}

func TestHeldBatchForwardErrorIsCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := nopSettings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	lp, err := NewFactory().CreateLogs(context.Background(), set, testConfig(time.Hour), consumertest.NewErr(assert.AnError))
	require.NoError(t, err)
	require.NoError(t, lp.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, lp.ConsumeLogs(context.Background(), logsWith("n", t0, text(pytorchOOM))))
	require.NoError(t, lp.Shutdown(context.Background()))
	m, err := tel.GetMetric("otelcol_processor_oom_classifier_forward_errors")
	require.NoError(t, err)
	assert.Equal(t, int64(1), sumOf(m))
}

// TestConcurrentSendersKeepTheirOrder: several senders, OOM and plain batches mixed, metrics
// arriving meanwhile. Nothing is lost and each sender's batches leave in the order sent.
func TestConcurrentSendersKeepTheirOrder(t *testing.T) {
	p := newProcessors(t, testConfig(20*time.Millisecond), nopSettings())
	ctx := context.Background()
	const senders, perSender = 4, 50
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			g := gpuMetrics{host: "n", hwID: "GPU-a", at: t0.Add(time.Duration(i) * 100 * time.Millisecond), used: 1, total: 2}
			assert.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(g)))
			time.Sleep(time.Millisecond)
		}
	}()
	errs := make(chan error, senders)
	for s := 0; s < senders; s++ {
		go func() {
			for i := 0; i < perSender; i++ {
				body := fmt.Sprintf("%d %03d", s, i)
				if i%5 == 0 {
					body += "\n" + pytorchOOM
				}
				if err := p.logs.ConsumeLogs(ctx, logsWith("n", t0.Add(time.Duration(i)*time.Second), text(body))); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for s := 0; s < senders; s++ {
		require.NoError(t, <-errs)
	}
	<-done
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == senders*perSender }, 10*time.Second, 10*time.Millisecond)
	last := map[string]string{}
	for _, ld := range p.lsink.AllLogs() {
		var s, i string
		fmt.Sscan(bodyOf(ld), &s, &i)
		assert.Less(t, last[s], i, "sender %s out of order", s)
		last[s] = i
	}
}

// joined is one batch holding the resources of all of lds, in order.
func joined(lds ...plog.Logs) plog.Logs {
	out := plog.NewLogs()
	for _, ld := range lds {
		ld.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
	}
	return out
}

// hostsOf lists each forwarded batch's resources as "host:body" of their first record.
func hostsOf(lds []plog.Logs) []string {
	var out []string
	for _, ld := range lds {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			h, _ := rls.At(i).Resource().Attributes().Get(resHostName)
			out = append(out, h.AsString()+":"+rls.At(i).ScopeLogs().At(0).LogRecords().At(0).Body().AsString())
		}
	}
	return out
}

// One host's OOM waiting for its metrics must not delay another host's ordinary logs, whether
// they come in their own batches or in the same batch; the waiting host keeps its order.
func TestOneHostsOOMDoesNotDelayAnotherHost(t *testing.T) {
	const wait = 300 * time.Second // on the fake clock
	clk := newFakeClock(t0)
	p := newProcessorsClock(t, testConfig(wait), nopSettings(), clk)
	ctx := context.Background()
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("a", t0, text(pytorchOOM))))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("b", t0, text("b1"))))
	assert.Equal(t, []string{"b:b1"}, hostsOf(p.lsink.AllLogs()), "host b goes on in the call")

	// A batch mixing both hosts: b's part goes on at once, a's waits behind a's OOM.
	require.NoError(t, p.logs.ConsumeLogs(ctx, joined(logsWith("a", t0, text("a2")), logsWith("b", t0, text("b2")),
		logsWith("a", t0, text("a3")), logsWith("c", t0, text("c1")))))
	assert.Equal(t, []string{"b:b1", "b:b2", "c:c1"}, hostsOf(p.lsink.AllLogs()))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("b", t0, text("b3"))))
	assert.Equal(t, 4, p.lsink.LogRecordCount(), "a's records are held")

	waitForTimer(t, clk)
	clk.Advance(wait)
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == 7 }, 5*time.Second, time.Millisecond)
	got := hostsOf(p.lsink.AllLogs())
	assert.Contains(t, got[4], "a:")
	assert.Contains(t, got[4], "CUDA out of memory")
	assert.Equal(t, []string{"a:a2", "a:a3"}, got[5:], "a's part keeps its order behind a's OOM")
	assert.Contains(t, firstRecord(p.lsink.AllLogs()[3]).Attributes().AsRaw(), attrCause)
}

// An OOM on one host that is held does not hold another host's OOM whose metrics are there.
func TestCoveredHostIsNotHeldBehindAnother(t *testing.T) {
	clk := newFakeClock(t0)
	p := newProcessorsClock(t, testConfig(time.Hour), nopSettings(), clk)
	ctx := context.Background()
	g := gpuMetrics{host: "b", hwID: "GPU-b", at: t0.Add(time.Second), used: 39 * gib, total: 40 * gib, procs: map[int64]int64{3101: 39 * gib}}
	require.NoError(t, p.metrics.ConsumeMetrics(ctx, metricsOf(g)))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("a", t0, text(pytorchOOM))))
	require.NoError(t, p.logs.ConsumeLogs(ctx, logsWith("b", t0, text(pytorchOOM))))
	require.Equal(t, 1, p.lsink.LogRecordCount())
	assert.Equal(t, "GPU-b", firstRecord(p.lsink.AllLogs()[0]).Attributes().AsRaw()[attrHWID])
}

// With the held queue full, a caller is not blocked until decision_wait ends: the oldest held
// part is released at once, classified with what is there and marked so, and nothing is lost.
func TestFullHeldQueueReleasesOldestAndDropsNothing(t *testing.T) {
	clk := newFakeClock(t0) // never advanced: on the old code a full queue blocks for good
	p := newProcessorsClock(t, testConfig(time.Hour), nopSettings(), clk)
	const extra = 5
	done := make(chan error, 1)
	go func() {
		for i := 0; i < maxHeldBatches+extra; i++ {
			if err := p.logs.ConsumeLogs(context.Background(), logsWith("a", t0, text(fmt.Sprintf("%04d %s", i, pytorchOOM)))); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a full held queue blocked the caller")
	}
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == extra }, 5*time.Second, time.Millisecond, "got %d", p.lsink.LogRecordCount())
	for i, ld := range p.lsink.AllLogs() {
		assert.True(t, strings.HasPrefix(bodyOf(ld), fmt.Sprintf("%04d ", i)), "the oldest leave first")
		ev, _ := firstRecord(ld).Attributes().Get(attrEvidence)
		assert.Contains(t, ev.Str(), "held queue was full")
	}
	require.NoError(t, p.logs.Shutdown(context.Background()))
	all := p.lsink.AllLogs()
	require.Len(t, all, maxHeldBatches+extra, "nothing dropped")
	for i, ld := range all {
		require.True(t, strings.HasPrefix(bodyOf(ld), fmt.Sprintf("%04d ", i)), "in order")
		if i >= extra {
			ev, _ := firstRecord(ld).Attributes().Get(attrEvidence)
			assert.NotContains(t, ev.Str(), "held queue was full")
		}
	}
}

// An OOM split off a mixed batch is enriched where it ends up: in its host's held part.
func TestOOMInSplitPartIsEnriched(t *testing.T) {
	clk := newFakeClock(t0)
	p := newProcessorsClock(t, testConfig(time.Minute), nopSettings(), clk)
	in := joined(logsWith("b", t0, text("b1")), logsWith("a", t0, text(pytorchOOM), text("a1")), logsWith("b", t0, text("b2")))
	require.NoError(t, p.logs.ConsumeLogs(context.Background(), in))
	require.Len(t, p.lsink.AllLogs(), 1)
	assert.Equal(t, []string{"b:b1", "b:b2"}, hostsOf(p.lsink.AllLogs()))
	waitForTimer(t, clk)
	clk.Advance(time.Minute)
	require.Eventually(t, func() bool { return p.lsink.LogRecordCount() == 4 }, 5*time.Second, time.Millisecond)
	held := p.lsink.AllLogs()[1]
	require.Equal(t, 1, held.ResourceLogs().Len())
	attrs := firstRecord(held).Attributes().AsRaw()
	assert.Equal(t, "pytorch", attrs[attrFramework])
	assert.Contains(t, attrs, attrCause)
	assert.NotContains(t, attrs[attrEvidence], "held queue was full")
	assert.Equal(t, "a1", held.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(1).Body().Str())
}

package oomclassifier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

func benchProcessors(b *testing.B, wait time.Duration) (processor.Metrics, processor.Logs) {
	f := NewFactory()
	cfg := testConfig(wait)
	mp, err := f.CreateMetrics(context.Background(), nopSettings(), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	lp, err := f.CreateLogs(context.Background(), nopSettings(), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	if err := mp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	if err := lp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = lp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return mp, lp
}

// nodeBatch is one collection of an 8-GPU node with 16 processes per GPU.
func nodeBatch(at time.Time) pmetric.Metrics {
	var gs []gpuMetrics
	for g := 0; g < 8; g++ {
		procs := make(map[int64]int64, 16)
		for p := 0; p < 16; p++ {
			procs[int64(1000+16*g+p)] = int64(p+1) * gib / 4
		}
		gs = append(gs, gpuMetrics{host: "node1", hwID: fmt.Sprintf("GPU-%d", g), busID: fmt.Sprintf("00000000:%02X:00.0", 0x10+g),
			index: int64(g), at: at, used: 60 * gib, total: 80 * gib, procs: procs})
	}
	return metricsOf(gs...)
}

// fillWindow sends 15 minutes of per-second collections of the 8-GPU node.
func fillWindow(b *testing.B, mp processor.Metrics) {
	for i := 0; i < 900; i++ {
		if err := mp.ConsumeMetrics(context.Background(), nodeBatch(t0.Add(time.Duration(i)*time.Second))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConsumeLogsNonOOM(b *testing.B) {
	_, lp := benchProcessors(b, 1500*time.Millisecond)
	lines := make([]func(plog.LogRecord), 100)
	for i := range lines {
		lines[i] = text(fmt.Sprintf("2025-03-01 12:00:%02d INFO trainer step=%d loss=0.%04d lr=3e-4 throughput=812 samples/s", i%60, i, i))
	}
	ld := logsWith("node1", t0, lines...)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := lp.ConsumeLogs(context.Background(), ld); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkConsumeLogsOOM enriches one PyTorch OOM record against a full 8-GPU window
// (includes copying the record from a template, since enrichment mutates it).
func BenchmarkConsumeLogsOOM(b *testing.B) {
	mp, lp := benchProcessors(b, 0)
	fillWindow(b, mp)
	tmpl := logsWith("node1", t0.Add(899*time.Second), text(pytorchOOM))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ld := plog.NewLogs()
		tmpl.CopyTo(ld)
		if err := lp.ConsumeLogs(context.Background(), ld); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConsumeMetrics compares the metrics side with a pass-through processor built the
// same way (processorhelper, no-op function) on one 8-GPU × 16-process collection.
func BenchmarkConsumeMetrics(b *testing.B) {
	run := func(b *testing.B, mp processor.Metrics) {
		batches := make([]pmetric.Metrics, 64)
		for i := range batches {
			batches[i] = nodeBatch(t0.Add(time.Duration(i) * time.Second))
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := mp.ConsumeMetrics(context.Background(), batches[i%len(batches)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("observe", func(b *testing.B) {
		mp, _ := benchProcessors(b, 0)
		run(b, mp)
	})
	b.Run("passthrough", func(b *testing.B) {
		mp, err := processorhelper.NewMetrics(context.Background(), nopSettings(), testConfig(0), consumertest.NewNop(),
			func(_ context.Context, md pmetric.Metrics) (pmetric.Metrics, error) { return md, nil })
		if err != nil {
			b.Fatal(err)
		}
		run(b, mp)
	})
	// What an OTLP exporter spends on the same batch at the least, for scale.
	b.Run("proto_marshal_reference", func(b *testing.B) {
		md := nodeBatch(t0)
		m := &pmetric.ProtoMarshaler{}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := m.MarshalMetrics(md); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkClassifyFullWindow is one classification with 15 min at 1 s of 8 GPUs in the window.
func BenchmarkClassifyFullWindow(b *testing.B) {
	mp, lp := benchProcessors(b, 0)
	fillWindow(b, mp)
	inst := lp.(*logsProcessor).inst
	ld := logsWith("node1", t0.Add(899*time.Second), text(pytorchOOM))
	rec := firstRecord(ld)
	o, ok := findOOM(rec, ld.ResourceLogs().At(0).Resource().Attributes())
	if !ok {
		b.Fatal("not an OOM")
	}
	o.pid = 1000 + 16*3 // on GPU-3
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.Attributes().Clear()
		classifyOOM(o, inst.store, inst.thresholds)
	}
}

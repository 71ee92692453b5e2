package parse

import "testing"

// ordinaryLines are representative application log lines of the kinds a
// logs pipeline carries (web access logs, Kubernetes components, training
// loops, databases, JSON loggers). They are written for this benchmark, not
// copied from a source, and hold no OOM.
var ordinaryLines = []string{
	`10.42.0.17 - - [01/May/2024:10:00:00 +0000] "GET /api/v1/models?limit=20 HTTP/1.1" 200 5123 "-" "python-requests/2.31.0" 0.004`,
	`I0501 10:00:00.123456       1 reflector.go:351] Caches populated for *v1.Pod from k8s.io/client-go/informers/factory.go:150`,
	`2024-05-01 10:00:00,123 - trainer - INFO - epoch 3/10 step 12000/50000 loss=0.2531 acc=0.912 lr=3.0e-04 throughput=812.3 samples/s`,
	`{"level":"info","ts":"2024-05-01T10:00:00.123Z","caller":"server/handler.go:88","msg":"request served","status":200,"latency_ms":12}`,
	`2024-05-01 10:00:00.123 UTC [4711] LOG:  checkpoint complete: wrote 1234 buffers (7.5%); 0 WAL file(s) added, 0 removed, 3 recycled`,
	`time="2024-05-01T10:00:00Z" level=info msg="pulling image" image="registry.example.com/team/inference:2024.05.01" platform=linux/amd64`,
	`May  1 10:00:00 node-17 systemd[1]: Started Session 4242 of user ubuntu; unit session-4242.scope entered running state successfully.`,
	`INFO:     10.0.3.7:51234 - "POST /v1/completions HTTP/1.1" 200 OK prompt_tokens=512 completion_tokens=128 total_time=0.84s queue=0`,
}

// BenchmarkParseMixedOrdinary runs Parse over ordinary application lines and
// the corpus's look-alikes (text that mentions memory, CUDA or allocation and
// is not a GPU allocation failure), one line per iteration: the cost of the
// non-OOM path on a realistic mix. Look-alikes are about a third of the mix
// here, far more than on a real fleet, so this is a pessimistic figure.
func BenchmarkParseMixedOrdinary(b *testing.B) {
	lines := append([]string(nil), ordinaryLines...)
	for _, c := range loadCited(b) {
		if !c.OOM && len(c.Text) <= 512 {
			lines = append(lines, c.Text)
		}
	}
	var n int
	for _, l := range lines {
		n += len(l)
	}
	b.SetBytes(int64(n / len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	clock := startCPUClock(b)
	i := 0
	for b.Loop() {
		sink, _ = Parse(lines[i])
		if i++; i == len(lines) {
			i = 0
		}
	}
	clock.report(b)
}

// BenchmarkParseOrdinaryOnly is the same over the ordinary lines alone: the
// common case on a fleet, where a line's only cost is the prefilter.
func BenchmarkParseOrdinaryOnly(b *testing.B) {
	for _, l := range ordinaryLines {
		if _, ok := Parse(l); ok {
			b.Fatalf("ordinary line recognised: %s", l)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	clock := startCPUClock(b)
	i := 0
	for b.Loop() {
		sink, _ = Parse(ordinaryLines[i])
		if i++; i == len(ordinaryLines) {
			i = 0
		}
	}
	clock.report(b)
}

var sinkBool bool

// BenchmarkPrefilterOrdinary is mayBeOOM alone over the ordinary lines: what
// every log record pays.
func BenchmarkPrefilterOrdinary(b *testing.B) { benchPrefilter(b, ordinaryLines, mayBeOOM) }

// BenchmarkPrefilterShort is mayBeOOM over the ordinary lines cut to 60 bytes, the length
// the e2e CPU run (scripts/e2e-cpu.sh) sends: per-line fixed costs weigh more there.
func BenchmarkPrefilterShort(b *testing.B) { benchPrefilter(b, shortLines(), mayBeOOM) }

// BenchmarkPrefilterShortOrXid is BenchmarkPrefilterShort through MayBeOOMOrXid, the one
// pass the logs processor makes over every record's text (the OOM and the Xid prefilter).
func BenchmarkPrefilterShortOrXid(b *testing.B) { benchPrefilter(b, shortLines(), MayBeOOMOrXid) }

// shortLines are the ordinary lines cut to 60 bytes.
func shortLines() []string {
	lines := make([]string, len(ordinaryLines))
	for i, l := range ordinaryLines {
		lines[i] = l[:60]
	}
	return lines
}

// benchPrefilter runs prefilter over lines, one line per op, round and round, with the
// process's CPU time per op.
func benchPrefilter(b *testing.B, lines []string, prefilter func(string) bool) {
	b.ReportAllocs()
	clock := startCPUClock(b)
	i := 0
	for b.Loop() {
		sinkBool = prefilter(lines[i])
		if i++; i == len(lines) {
			i = 0
		}
	}
	clock.report(b)
}

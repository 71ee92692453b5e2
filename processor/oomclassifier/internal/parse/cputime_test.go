package parse

import (
	"runtime"
	"testing"
	"time"
)

// The team's machine is shared: a benchmark's wall time counts the time its
// thread waited for a core. cpuClock reports the thread's own CPU time
// (RUSAGE_THREAD) beside ns/op, as "cpu-ns/op", which a loaded machine
// inflates far less.
type cpuClock struct{ start time.Duration }

// startCPUClock locks the benchmark goroutine to its thread (unlocked by
// report) and reads the thread's CPU time.
func startCPUClock(b *testing.B) *cpuClock {
	b.Helper()
	runtime.LockOSThread()
	return &cpuClock{start: threadCPU()}
}

// report adds cpu-ns/op; call it after the loop.
func (c *cpuClock) report(b *testing.B) {
	b.Helper()
	d := threadCPU() - c.start
	runtime.UnlockOSThread()
	if b.N > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

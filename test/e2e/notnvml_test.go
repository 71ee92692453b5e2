//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// TestLibraryPathNotNVML: library_path names a library that loads but is not NVML (libz,
// libc). Before, go-nvml called nvmlInit in it and the loader ended the collector with exit
// 127 ("symbol lookup error"). Now the collector stays up, logs one error naming the library
// and what it lacks, exports nothing, and stops cleanly.
func TestLibraryPathNotNVML(t *testing.T) {
	for _, lib := range []string{"/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libc.so.6"} {
		t.Run(filepath.Base(lib), func(t *testing.T) {
			if _, err := os.Stat(lib); err != nil {
				t.Skipf("%s: %v", lib, err)
			}
			c := startCollector(t, strings.ReplaceAll(nvmlConfig, "{{LIB}}", lib))
			e2eharness.WaitFor(t, 20*time.Second, c, "the receiver's error", func() bool {
				return strings.Contains(c.Output(), "is not the NVIDIA driver's NVML library and is never called into")
			})
			time.Sleep(3 * time.Second) // several retries (1 s, 2 s)
			out := c.Output()
			if !assert.False(t, c.Exited(), "the collector is still running") {
				t.Fatalf("collector exited: %v\n%s", c.Err(), out)
			}
			assert.NotContains(t, out, "symbol lookup error")
			assert.Equal(t, 1, strings.Count(out, "is not the NVIDIA driver's NVML library and is never called into"), "one error, not one per retry:\n%s", out)
			assert.Contains(t, out, lib+" is not the NVIDIA driver's NVML library: it lacks nvmlInit_v2, nvmlShutdown, nvmlErrorString")
			assert.Empty(t, e2eharness.ReadMetrics(t, filepath.Join(c.dir, "metrics.jsonl")))
			c.stop(t)
		})
	}
}

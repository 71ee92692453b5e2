package simnvml

import (
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// BenchmarkScrapeOneGPU measures the simulator's share of one scrape of one
// GPU with 16 processes: the NVML calls the receiver makes per device. The
// receiver's scrape benchmark subtracts it to get its own cost.
func BenchmarkScrapeOneGPU(b *testing.B) {
	var y strings.Builder
	y.WriteString("duration: 60s\ngpus:\n  - utilization: 50\n    processes:\n")
	for i := range 16 {
		fmt.Fprintf(&y, "      - {pid: %d, name: w%d, memory: {ramp: {from: 1GiB, to: 4GiB, over: 60s}}}\n", 1000+i, i)
	}
	sim, _ := newTestSim(b, parse(b, y.String()), Options{})
	d := deviceAt(b, sim, 0)
	b.ReportAllocs()
	for b.Loop() {
		d.GetMemoryInfo()
		d.GetMemoryInfo_v2()
		d.GetComputeRunningProcesses()
		d.GetGraphicsRunningProcesses()
		d.GetUtilizationRates()
		d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
		d.GetRetiredPages(nvml.PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
		d.GetRetiredPagesPendingStatus()
		d.GetRemappedRows()
		d.GetEccMode()
		d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
		d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	}
}

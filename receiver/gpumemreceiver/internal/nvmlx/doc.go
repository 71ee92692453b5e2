// Package nvmlx is the gpu_mem receiver's NVML driver layer: one Session per receiver that
// gates every NVML call (init, background retry, shutdown), the probe of the symbols the
// installed library exports, device discovery with the facts that do not change and what
// each call was found to support, MIG state and instances, lost-GPU handling and
// re-enumeration. Which library it is handed (the driver's or the simulator) is
// internal/node's choice.
//
// The receiver's scrape concerns build on it; it knows nothing of them beyond the state it
// carries per device for them. The same code runs for real and simulated devices: only the
// nvml.Interface differs.
package nvmlx // import "github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"

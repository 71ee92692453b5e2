// Package gpumemreceiver reads GPU memory, per-process memory and reliability state from NVML
// (github.com/NVIDIA/go-nvml) and emits them as OTLP metrics. The same code runs against a real
// driver or a scenario-driven simulation: only the nvml.Interface differs.
//
// The NVML driver layer (the session that gates every call, the symbol probe, device
// discovery, MIG, lost GPUs) is internal/nvmlx; what differs between a real and a simulated
// node (the library, /proc, the kernel log, the kubelet) is composed by internal/node; this
// package is the wiring (config, factory, receiver, scraper) plus one file per scraped concern.
package gpumemreceiver // import "github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver"

// Package gpumemreceiver reads GPU memory, per-process memory and reliability state from NVML
// (github.com/NVIDIA/go-nvml) and emits them as OTLP metrics. The same code runs against a real
// driver or a scenario-driven simulation: only the nvml.Interface differs.
package gpumemreceiver // import "github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver"

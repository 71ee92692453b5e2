// Package xidsource is the gpu_mem receiver's Xid event source: it watches NVML's Xid
// events and the kernel log, merges the two reports of one occurrence, finds the GPU (or
// MIG instance) each names, and hands each occurrence on once.
package xidsource // import "github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/xidsource"

// Package window keeps a bounded history of GPU memory metrics per (host, GPU), indexed by the
// data points' own timestamps, so that an OOM record can be classified against the state of its
// GPU at the moment it happened even when metrics arrive late, batched or out of order.
//
// The package is pure: no pdata, no clock, no goroutines. The processor converts pdata into
// Samples; internal/diagnose converts Snapshots into the classifier's input.
//
// Of the processor's packages it imports only internal/gpustate (the Allocation and Xid it
// shares with the classifier); it imports neither classify, diagnose nor parse.
package window

// Package ramp finds a steady memory ramp in a time series: the least-squares line through
// the part after the last step (a model load, a restart, a big free), and whether that line
// is a steady climb rather than a load followed by a plateau or a training loop's sawtooth.
//
// It is the one copy of this fit: the gpu_mem receiver uses it on its own samples to
// forecast the runway before an OOM, and the oom_classifier uses it on its metric window to
// decide memory_leak after one. Plain Go types, no pdata: fuzzable and benchmarkable.
package ramp

// Package classify decides why a GPU allocation failed (docs/causes.md).
//
// Classify takes what the OOM message said (OOM), what the metric window knew about the
// GPU at that moment (GPUState) and the rule thresholds, and returns the cause, the other
// causes that also hold, a confidence, one evidence sentence and a recommendation.
//
// Every rule is a small pure function over a precomputed view of the inputs (facts); the
// rules run in the order of the causes table. A fault Xid near the OOM is the cause
// whenever it holds; otherwise the holding rule that explains the most memory is (table
// order breaks ties), and the others that hold are contributing causes. Values that cannot
// be true are dropped first (sanity.go) and named in the evidence. The package is plain Go
// with no pdata so it can be fuzzed and benchmarked on its own.
//
// Of the processor's packages it imports only internal/gpustate (the Allocation and Xid the
// window hands over as they are); it never imports window, diagnose or parse: the join with
// the window is internal/diagnose's.
package classify

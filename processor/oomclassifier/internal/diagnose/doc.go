// Package diagnose classifies one OOM against the metric window: it matches the OOM to its
// GPU (window.Store.SnapshotTo), checks the record's stamp against the message's figures and
// moves it when the log clock is skewed (skew.go), hands the window's snapshot to the
// classifier (classify.Classify) and adds the evidence sentences that need the window's own
// view: how a Kubernetes record was matched, its workload's peak and the job's other GPUs
// (match.go).
//
// It is the join of internal/window and internal/classify and imports both (the shared types
// of internal/gpustate reach it through them); neither imports it, and it imports no pdata and not parse.
// The processor's root builds its Input from the record and writes its Outcome back.
package diagnose

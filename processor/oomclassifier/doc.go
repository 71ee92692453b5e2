// Package oomclassifier is the oom_classifier processor: it recognises GPU out-of-memory
// errors in log records, classifies each one's cause against a window of the GPU's own
// metrics, and writes the classification onto the record (documentation.md lists the
// attributes; docs/causes.md the causes, rules and thresholds). Kernel Xid lines arriving as
// plain log records are annotated and kept as evidence, and the gpu_mem receiver's
// predicted-OOM records are kept as memory_leak evidence.
//
// One component id sits in two pipelines and both sides share one instance (instance.go):
//
//   - the metrics side (metrics.go, metrics_ingest.go, metrics_alloc.go) observes every batch
//     into the shared metric window and passes it on unchanged;
//   - the logs side (logs.go, hold.go) recognises OOM and Xid records (records.go,
//     stitch.go, streams.go, annotate.go, prediction.go), holds an OOM's batch until the
//     window covers its moment or decision_wait has passed, and classifies it
//     (classify_glue.go).
//
// This package is the pdata edge and the lifecycle: config.go, factory.go and instance.go;
// reading and writing pdata (pdata.go, attributes.go, device_kind.go, timesanity.go); the
// pipelines' sides (sides.go, hostname_warn.go) and the internal telemetry (ratelimit.go,
// internal/metadata). The work itself lives in the internal packages:
//
//   - internal/parse reads an OOM message's numbers (framework, bytes, device);
//   - internal/window keeps the bounded per-GPU metric history and answers a snapshot of a
//     GPU at a moment;
//   - internal/gpustate holds the types the window and the classifier share (Allocation, Xid);
//   - internal/classify decides the cause from the message and a snapshot, pure rules;
//   - internal/diagnose joins window and classify for one OOM: the match, the log clock
//     check, the conversion of the snapshot and the evidence sentences of the match.
//
// Imports run one way: the root imports all of them; diagnose imports window and classify
// (and uses gpustate's types through them); window and classify import gpustate; parse and
// gpustate import none of the processor's packages.
package oomclassifier

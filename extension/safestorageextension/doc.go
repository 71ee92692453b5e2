// Package safestorageextension implements the safe_file_storage extension: contrib's
// file_storage, with every database file in its directory checked before the first component
// opens it. A damaged file (truncated, garbage in its pages, both meta pages gone, emptied to
// zero bytes) is moved aside, logged and counted, and a fresh one is started, instead of bbolt
// panicking or faulting on start for ever or silently starting empty (README.md).
package safestorageextension // import "github.com/gpumem/otelcol-gpumem/extension/safestorageextension"

// Package hostidentityprocessor implements the host_identity processor: it names the host on
// every resource that lacks host.name (OTEL_RESOURCE_ATTRIBUTES, then a configured name, then
// the hostname), so the metrics and logs of one node meet under one host.name. A small
// stand-in for resourcedetectionprocessor with the env and system detectors (README.md).
package hostidentityprocessor // import "github.com/gpumem/otelcol-gpumem/processor/hostidentityprocessor"

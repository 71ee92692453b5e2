// Package e2eharness runs the built distribution the way a user does, for the end-to-end
// tests of test/e2e and deploy/: it finds the binary (`make build`, or OTELCOL_GPUMEM_BIN),
// runs it (or any helper program: Prometheus, a stand-in kubelet) as a process a test may
// signal, kill and start again, keeps its output for the failure message, reads what the
// file exporter wrote, waits for a condition while noticing a process that died, and hands
// out free loopback ports. Only tests import it.
package e2eharness

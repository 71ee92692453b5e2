// Package node composes what differs between a real and a simulated GPU node: the NVML
// library (the driver's, or a scenario replay), where the host's /proc and kernel log are
// read, when the kernel's clock started, where the kubelet is read (and, simulated, a
// kubelet serving the scenario's pods), and the collector's PID namespace.
package node

// Package simkubelet is a fake kubelet PodResources v1 server: the kubelet's
// own generated gRPC service (k8s.io/kubelet/pkg/apis/podresources/v1) on a
// unix socket, serving a list of pods the caller sets.
//
// It is production code, not a test helper, because three users share it:
// the podresources client's unit tests, the end-to-end tests of the built
// collector, and the simulated backend, which serves its scenario's pod
// allocations so `make demo` shows them. Switches mimic the kubelets the
// client must survive: one without GetAllocatableResources (before 1.21) and
// one whose List fails.
package simkubelet

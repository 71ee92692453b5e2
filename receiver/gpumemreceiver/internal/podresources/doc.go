// Package podresources reads which pod and container the kubelet allocated each GPU to, from
// the kubelet's PodResources API (v1) on its unix socket.
package podresources

import (
	_ "k8s.io/kubelet/pkg/apis/podresources/v1" // the kubelet's own generated client and types
)

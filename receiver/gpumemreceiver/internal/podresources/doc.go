// Package podresources tells the gpu_mem receiver which pod and container
// the kubelet allocated each GPU to, and names the pod and container of each
// GPU process.
//
// Two sources, both read on a bounded refresh interval and cached (Source):
//
//   - The kubelet's PodResources API v1 (k8s.io/kubelet/pkg/apis/podresources/v1)
//     on its unix socket: List gives, per pod (namespace, name) and container,
//     the device plugin ids of its devices and, from Kubernetes 1.34 on by
//     default, the devices DRA drivers allocated through its claims
//     (dynamic_resources); GetAllocatableResources, where the kubelet has it,
//     the devices it can allocate. Neither gives a pod uid or a container id.
//     Device ids are mapped to NVML UUIDs by ParseDeviceID (deviceid.go says
//     which forms NVIDIA's device plugin writes and where that was read).
//     GKE's device plugin and NVIDIA's DRA driver name a GPU by its minor
//     number instead (minorref.go): such allocations wait in the Snapshot
//     until the receiver, which knows each device's minor number from NVML,
//     resolves them (Snapshot.Resolve, Source.Replace). Only NVIDIA's DRA
//     driver's devices are kept.
//   - The kubelet's log directory names: /var/log/pods/<ns>_<pod>_<uid> (pod
//     uid <-> namespace and name) and the symlinks in its sibling
//     /var/log/containers, <pod>_<ns>_<container>-<container id>.log
//     (container id -> pod and container name). Names only; nothing is opened.
//
// Join order of Source.Lookup, for a process whose cgroup gave a pod uid and
// a container id and which holds memory on the device with a given UUID:
//
//  1. pod uid -> namespace and pod name, from /var/log/pods.
//  2. container id -> container name, from /var/log/containers, when the link
//     names the same pod as step 1; when step 1 found nothing, the link's pod
//     and namespace are taken as well. A link naming another pod than the uid
//     (a stale link of a recreated pod) is ignored: the uid wins.
//  3. When the pod is named but the container is not: PodResources, if exactly
//     one container of that pod lists the device (one replica or more). Two
//     containers sharing a device leave the container unnamed. Step 3 can
//     misname a process of another container of the same pod that reaches
//     the device without an allocation (NVIDIA_VISIBLE_DEVICES=all in a
//     sidecar); its container.id still tells the two apart.
//
// A process is never named from PodResources alone: List has no uid, and
// naming a process after the pod the device is allocated to would hide the
// very case reconciliation looks for, a process of another pod (or of no pod)
// on that device. Without the log directories, processes keep their pod uid
// and container id only, while allocations are still reported per device.
package podresources

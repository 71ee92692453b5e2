package simnvml

import (
	"fmt"
	"strings"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/podresources"
)

// Pod is a Kubernetes pod on the simulated node: what the simulated kubelet's PodResources
// API lists, and whose log directory the simulator lays out (Options.PodLogsDir).
type Pod struct {
	UID       string `yaml:"uid"`
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace,omitempty"`
	// Containers are the pod's containers; the devices the kubelet allocated are theirs.
	Containers []PodContainer `yaml:"containers"`
}

// PodContainer is one container of a pod.
type PodContainer struct {
	Name string `yaml:"name"`
	// ID is the container id its processes' cgroups name (processes[].container_id): the
	// kubelet's /var/log/containers link carries it.
	ID      string       `yaml:"id,omitempty"`
	Devices []PodDevices `yaml:"devices,omitempty"`
	// Claims are DRA claims: the kubelet lists their devices as dynamic resources.
	Claims []PodClaim `yaml:"claims,omitempty"`
}

// PodClaim is one ResourceClaim a container uses and the devices its driver allocated.
type PodClaim struct {
	Name string `yaml:"name"`
	// Namespace is the claim's; the pod's when omitted.
	Namespace string `yaml:"namespace,omitempty"`
	// Driver is the DRA driver; gpu.nvidia.com when omitted.
	Driver string `yaml:"driver,omitempty"`
	// Pool is the resource pool; "node" when omitted (the driver names it after the node).
	Pool string `yaml:"pool,omitempty"`
	// Devices are device names in the pool: gpu-<minor>, gpu-<minor>-mig-<profile>-<id>-<start>.
	Devices []string `yaml:"devices"`
}

// PodDevices are the device plugin ids of one resource allocated to a container.
type PodDevices struct {
	// Resource is the extended resource name; nvidia.com/gpu when omitted.
	Resource string `yaml:"resource,omitempty"`
	// IDs are what the device plugin named the devices: a GPU UUID, a MIG device UUID, or
	// either with "::<n>" for a time-sliced replica.
	IDs []string `yaml:"ids"`
}

// DefaultPodResource is the resource NVIDIA's device plugin advertises whole GPUs as.
const DefaultPodResource = "nvidia.com/gpu"

// maxPods bounds a scenario's pods (a node runs at most 110 by default; 256 leaves room).
const maxPods = 256

// normalizePods defaults and checks the pods: names present, uids unique, and every device
// id naming a GPU or MIG instance of the scenario (a typo would otherwise show as a pod on
// no GPU).
func (s *Scenario) normalizePods() error {
	if len(s.Pods) > maxPods {
		return fmt.Errorf("pods: %d pods, at most %d are supported", len(s.Pods), maxPods)
	}
	known := map[string]bool{}
	minors := map[int]bool{}
	for _, g := range s.GPUs {
		known[g.UUID] = true
		minors[*g.Minor] = true
		if g.MIG != nil {
			for _, inst := range g.MIG.Instances {
				known[inst.UUID] = true
			}
		}
	}
	uids := map[string]string{}
	for i := range s.Pods {
		p := &s.Pods[i]
		path := fmt.Sprintf("pods[%d]", i)
		if p.UID == "" || p.Name == "" {
			return fmt.Errorf("%s: uid and name are required", path)
		}
		if other, dup := uids[p.UID]; dup {
			return fmt.Errorf("%s.uid: %s is also the uid of %s", path, p.UID, other)
		}
		uids[p.UID] = path
		if p.Namespace == "" {
			p.Namespace = "default"
		}
		if len(p.Containers) == 0 {
			return fmt.Errorf("%s.containers: at least one container is required", path)
		}
		for j := range p.Containers {
			c := &p.Containers[j]
			cpath := fmt.Sprintf("%s.containers[%d]", path, j)
			if c.Name == "" {
				return fmt.Errorf("%s.name: required", cpath)
			}
			for k := range c.Devices {
				d := &c.Devices[k]
				if d.Resource == "" {
					d.Resource = DefaultPodResource
				}
				for n, id := range d.IDs {
					uuid, _, _ := strings.Cut(id, "::")
					if ref, gke := podresources.ParseGKEDeviceID(id); gke && minors[ref.Minor] {
						continue
					}
					if !known[uuid] {
						return fmt.Errorf("%s.devices[%d].ids[%d]: %q names no GPU or MIG instance of the scenario", cpath, k, n, id)
					}
				}
			}
			for k := range c.Claims {
				cl := &c.Claims[k]
				if cl.Name == "" || len(cl.Devices) == 0 {
					return fmt.Errorf("%s.claims[%d]: name and devices are required", cpath, k)
				}
				if cl.Namespace == "" {
					cl.Namespace = p.Namespace
				}
				if cl.Driver == "" {
					cl.Driver = podresources.DRADriverNVIDIA
				}
				if cl.Pool == "" {
					cl.Pool = "node"
				}
			}
		}
	}
	return nil
}

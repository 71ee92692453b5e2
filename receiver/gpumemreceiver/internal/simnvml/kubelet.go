package simnvml

import "github.com/gpumem/otelcol-gpumem/internal/simkubelet"

// KubeletPods are the scenario's pods as the simulated kubelet's PodResources API lists them.
func (s *Scenario) KubeletPods() []simkubelet.Pod {
	pods := make([]simkubelet.Pod, 0, len(s.Pods))
	for _, p := range s.Pods {
		pod := simkubelet.Pod{Namespace: p.Namespace, Name: p.Name}
		for _, c := range p.Containers {
			ctr := simkubelet.Container{Name: c.Name}
			for _, d := range c.Devices {
				ctr.Devices = append(ctr.Devices, simkubelet.Devices{Resource: d.Resource, IDs: d.IDs})
			}
			for _, cl := range c.Claims {
				claim := simkubelet.Claim{Name: cl.Name, Namespace: cl.Namespace}
				for _, dev := range cl.Devices {
					claim.Devices = append(claim.Devices, simkubelet.ClaimDevice{Driver: cl.Driver, Pool: cl.Pool, Device: dev})
				}
				ctr.Claims = append(ctr.Claims, claim)
			}
			pod.Containers = append(pod.Containers, ctr)
		}
		pods = append(pods, pod)
	}
	return pods
}

package podresources

// Identity names the pod and container of a process; a field the sources
// cannot give is "".
type Identity struct {
	Namespace string
	Pod       string
	Container string
}

// Lookup names the pod and container of one GPU process from what its cgroup
// says (pod uid, container id) and the device it holds memory on, in the
// order doc.go gives. It reads only immutable indexes: no lock, no allocation,
// no I/O, so the scraper calls it per process per scrape.
func (s *Source) Lookup(podUID, containerID, deviceUUID string) Identity {
	var id Identity
	x := s.logs.Load()
	if p, ok := x.podByUID[podUID]; ok && podUID != "" {
		id.Namespace, id.Pod = p.ns, p.pod
	}
	if c, ok := x.containers[containerID]; ok && containerID != "" {
		switch {
		case id.Pod == "":
			id = Identity{Namespace: c.ns, Pod: c.pod, Container: c.container}
		case c.ns == id.Namespace && c.pod == id.Pod:
			id.Container = c.container
			// Else the link names another pod than the uid (a stale link of a
			// recreated pod): the uid wins and the container stays unnamed here.
		}
	}
	if id.Container == "" && id.Pod != "" {
		id.Container = s.snap.Load().ContainerOf(id.Namespace, id.Pod, deviceUUID)
	}
	return id
}

// PodUID returns the uid of a pod named by the kubelet's log directories, ""
// when they do not name it. PodResources lists pods by name only; this gives
// the allocation metric its k8s.pod.uid.
func (s *Source) PodUID(namespace, pod string) string {
	return s.logs.Load().uidByPod[podKey{namespace, pod}]
}

package window

// ObserveXid records an Xid event of a host as evidence.
func (s *Store) ObserveXid(hostName string, x Xid) Overflow {
	var of Overflow
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[hostName]
	if h == nil {
		h = &host{gpus: make(map[string]*gpu)}
		s.hosts[hostName] = h
	}
	i := len(h.xids)
	for i > 0 && h.xids[i-1].T.After(x.T) {
		i--
	}
	h.xids = append(h.xids, Xid{})
	copy(h.xids[i+1:], h.xids[i:])
	h.xids[i] = x
	cutoff := h.xids[len(h.xids)-1].T.Add(-s.cfg.Window)
	k := 0
	for k < len(h.xids) && h.xids[k].T.Before(cutoff) {
		k++
	}
	if over := len(h.xids) - k - s.cfg.MaxXidsPerHost; s.cfg.MaxXidsPerHost > 0 && over > 0 {
		k += over
		of.XidsCapped = over
	}
	if k > 0 {
		h.xids = append(h.xids[:0:0], h.xids[k:]...)
	}
	return of
}

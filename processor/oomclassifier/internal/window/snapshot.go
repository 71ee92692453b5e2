package window

import (
	"cmp"
	"slices"
	"time"
)

const (
	// lookAhead lets an OOM that precedes the first sample of its GPU (collector just started,
	// clocks a little apart) still use a sample taken shortly after.
	lookAhead = 5 * time.Second
	// presenceSlack: processes whose newest sample is this close to the newest process sample
	// at the OOM's time belong to the same collection and are taken as alive then.
	presenceSlack = 500 * time.Millisecond
	// xidAfter keeps Xids logged shortly after the OOM: a fault often reaches the kernel log
	// after the application has already reported the failed allocation.
	xidAfter = time.Minute
)

// Query asks for the state of the GPU an OOM happened on.
type Query struct {
	Host        string    // host.name of the log record's resource; "" matches metrics without one
	At          time.Time // the OOM record's timestamp
	PID         int       // the failing process, -1 when unknown
	DeviceIndex int       // the ordinal written in the message, -1 when absent
	// Pod is the record's Kubernetes identity; zero for a record without one, which is then
	// matched by pid, only GPU and node ordinal alone.
	Pod PodRef
}

// Process is a process alive on the GPU at the query time.
type Process struct {
	ProcessInfo
	Bytes  int64
	Series []Point // its memory over the window up to the query time
}

// Snapshot is the state of one GPU at a moment, from the window.
type Snapshot struct {
	HWID      string
	Info      GPUInfo
	MatchedBy string // Match.By
	Match     Match
	// Byte values at the query time; -1 when the window has no sample of that series.
	Total, Used, Free, Reserved, Unattributed int64
	SampleAge                                 time.Duration // |query time − time of the Used sample|
	Usage                                     []Point       // hw.gpu.memory.usage over the window
	Processes                                 []Process
	RetiredPages                              map[string]int64 // by cause
	RetiredPagesPending                       bool
	RemappedRows                              map[string]int64 // by remap type
	RemapPending, RemapFailed                 bool
	// ProcessesHidden: the collector's NVML hid processes of other PID namespaces then, so
	// Processes is not every process holding memory (nvidia.gpu.process.hidden).
	ProcessesHidden bool
	// SlurmJob and SlurmStep are the Slurm job and step of the matched process (the record's
	// pid), else of every process on the GPU when they all ran in one; "" when not known.
	SlurmJob, SlurmStep string
	// Siblings are the host's other GPUs the record's job held memory on at the query time.
	Siblings Siblings
	Xids     []Xid // on this GPU, window before to xidAfter after
	// Allocations are the kubelet's allocations of this GPU at the query time; nil when none.
	Allocations []Allocation
	// Workload is the memory of the matched pod's workload on the host; Known false when the
	// pod's namespace, name and container are not all known.
	Workload WorkloadPeak

	// series is the array behind the failing process's Series, kept for SnapshotTo's reuse:
	// Processes is rebuilt each time, so its elements cannot carry it from one call to the next.
	series []Point
}

// Snapshot matches the query to a GPU and returns its state at q.At. It returns false when no
// GPU of the host can be chosen by the rules.
func (s *Store) Snapshot(q Query) (Snapshot, bool) {
	var snap Snapshot
	ok := s.SnapshotTo(&snap, q)
	return snap, ok
}

// SnapshotTo is Snapshot written into dst, reusing the arrays of dst's slices and maps: a
// caller that classifies OOM after OOM with one pooled Snapshot copies a full window without
// allocating. Everything dst held before is overwritten, so what an earlier call returned in
// it must no longer be in use. On false only dst.Match is written: why no GPU was chosen.
func (s *Store) SnapshotTo(dst *Snapshot, q Query) bool {
	at := q.At.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[q.Host]
	m := Match{Pod: q.Pod}
	var g *gpu
	if h != nil {
		g = s.match(h, q, at, &m)
	} else if q.Pod.Known() {
		m.PodMiss = PodNotFound
	}
	if g == nil {
		dst.Match = m
		return false
	}
	s.snapshot(dst, h, g, &m, at, q.PID)
	return true
}

// alive reports whether the GPU reported around at: a point inside the window before it and
// one no later than lookAhead after it.
func (s *Store) alive(g *gpu, at int64) bool {
	if g.newest < at-int64(s.cfg.Window) {
		return false
	}
	for i := range g.gauges {
		if s := &g.gauges[i]; s.len() > 0 && s.first().T <= at+int64(lookAhead) {
			return true
		}
	}
	for _, p := range g.procs {
		if p.s.len() > 0 && p.s.first().T <= at+int64(lookAhead) {
			return true
		}
	}
	return false
}

// valueAt returns the latest point at or before at, else the first within lookAhead after.
func valueAt(s *series, at int64) (Point, bool) {
	if p, ok := s.at(at); ok {
		return p, true
	}
	if s.len() > 0 && s.first().T <= at+int64(lookAhead) {
		return s.first(), true
	}
	return Point{}, false
}

func (s *Store) snapshot(snap *Snapshot, h *host, g *gpu, m *Match, at int64, pid int) {
	from := at - int64(s.cfg.Window)
	*snap = Snapshot{
		HWID: g.key.HWID, Info: g.info, MatchedBy: m.By, Match: *m,
		Usage:     g.gauges[Used].appendBetween(snap.Usage[:0], from, at),
		Processes: snap.Processes[:0], Xids: snap.Xids[:0], series: snap.series,
		Allocations:  nilIfEmpty(g.appendAllocations(snap.Allocations[:0], at)),
		Workload:     s.workloadPeak(h, &m.Pod, from, at),
		RetiredPages: labelled(snap.RetiredPages, g.labelled[0], at),
		RemappedRows: labelled(snap.RemappedRows, g.labelled[1], at),
	}
	vals := [...]*int64{&snap.Used, &snap.Total, &snap.Free, &snap.Reserved, &snap.Unattributed}
	for k, dst := range vals {
		*dst = -1
		if p, ok := valueAt(&g.gauges[k], at); ok {
			*dst = p.V
			if Kind(k) == Used {
				snap.SampleAge = time.Duration(abs(at - p.T))
			}
		}
	}
	snap.RetiredPagesPending = flag(&g.gauges[RetiredPagesPending], at)
	snap.RemapPending = flag(&g.gauges[RemapPending], at)
	snap.RemapFailed = flag(&g.gauges[RemapFailed], at)
	snap.ProcessesHidden = flag(&g.gauges[ProcessesHidden], at)
	s.processes(snap, g, from, at, pid)
	snap.SlurmJob, snap.SlurmStep = slurmJob(snap.Processes, m.By, pid)
	snap.Siblings = s.siblings(h, g, &snap.Match.Pod, snap.SlurmJob, at)
	if p := snap.Match.failing(pid, snap.Processes); p != nil {
		snap.Match.FailingPID = p.PID
		if snap.Workload.Known {
			snap.Workload.Now = p.Bytes
		}
		s.failingSeries(snap, g, p, from, at)
	}
	lo, hi := time.Unix(0, from), time.Unix(0, at).Add(xidAfter)
	for _, x := range h.xids {
		mine := x.HWID == g.key.HWID || (x.HWID == "" && x.BusID != "" && x.BusID == g.info.BusID)
		if mine && !x.T.Before(lo) && !x.T.After(hi) {
			snap.Xids = append(snap.Xids, x)
		}
	}
	if len(snap.Xids) == 0 {
		snap.Xids = nil // as an unreused Snapshot has it: no Xids, not an empty list
	}
}

// maxStackProcs sizes the candidates array processes keeps on the stack; a GPU with more
// processes (MPS, many small workers) spills to the heap.
const maxStackProcs = 64

// processes fills snap.Processes with those in the collection nearest the query time, sorted
// by pid. Only the failing process (pid) gets its series: the rules read no other process's
// history, and copying every series of a full window cost more than the classification itself.
func (s *Store) processes(snap *Snapshot, g *gpu, from, at int64, pid int) {
	type cand struct {
		p  *proc
		pt Point
	}
	var buf [maxStackProcs]cand
	cands := buf[:0]
	// The reference is the newest collection at or before at, else the earliest after it.
	before, after := int64(-1<<63), int64(1<<63-1)
	for _, p := range g.procs {
		pt, ok := valueAt(&p.s, at)
		if !ok || pt.T < from {
			continue
		}
		cands = append(cands, cand{p, pt})
		if pt.T <= at {
			before = max(before, pt.T)
		} else {
			after = min(after, pt.T)
		}
	}
	ref := before
	if ref == -1<<63 {
		ref = after
	}
	// Sorting the small candidates rather than the Processes moves no strings around.
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.p.info.PID, b.p.info.PID) })
	if cap(snap.Processes) < len(cands) {
		snap.Processes = make([]Process, 0, len(cands))
	}
	for _, c := range cands {
		if abs(c.pt.T-ref) > int64(presenceSlack) {
			continue
		}
		p := Process{ProcessInfo: c.p.info, Bytes: c.pt.V}
		if pid >= 0 && c.p.info.PID == pid {
			if ps := c.p.s.appendBetween(snap.series[:0], from, at); ps != nil {
				snap.series = ps
				p.Series = ps
			}
		}
		snap.Processes = append(snap.Processes, p)
	}
	if len(snap.Processes) == 0 {
		snap.Processes = nil
	}
}

// slurmJob is the Slurm job and step the record's process ran in: the matched pid's, else the
// one job (and step) every listed process of the GPU shares, since Slurm hands a job its GPUs
// whole. A GPU shared by several jobs names none: which of them failed is not known.
func slurmJob(procs []Process, by string, pid int) (job, step string) {
	if by == MatchedByPID {
		for i := range procs {
			if procs[i].PID == pid {
				return procs[i].SlurmJob, procs[i].SlurmStep
			}
		}
	}
	for i := range procs {
		p := &procs[i]
		switch {
		case p.SlurmJob == "":
			return "", ""
		case i == 0:
			job, step = p.SlurmJob, p.SlurmStep
		case p.SlurmJob != job:
			return "", ""
		case p.SlurmStep != step:
			step = ""
		}
	}
	return job, step
}

func flag(s *series, at int64) bool {
	p, ok := valueAt(s, at)
	return ok && p.V != 0
}

// labelled returns the value of each label at the time, in dst (cleared) when there is one, or
// nil when no label has a value then: nil means "unknown", an empty map would not.
func labelled(dst map[string]int64, m map[string]*series, at int64) map[string]int64 {
	clear(dst)
	out := dst
	for label, s := range m {
		if p, ok := valueAt(s, at); ok {
			if out == nil {
				out = make(map[string]int64, len(m))
			}
			out[label] = p.V
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

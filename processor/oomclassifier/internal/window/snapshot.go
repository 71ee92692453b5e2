package window

import (
	"sort"
	"time"
)

// How a record was matched to its GPU, in the order DESIGN.md §3 tries them.
const (
	MatchedByPID         = "pid"          // the pid holds memory on exactly that GPU at that time
	MatchedByOnlyGPU     = "only_gpu"     // the host has one GPU reporting at that time
	MatchedByDeviceIndex = "device_index" // the message's ordinal equals nvidia.gpu.index
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
}

// Point is one sample of a series in a Snapshot.
type Point struct {
	T time.Time
	V int64
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
	MatchedBy string
	// Byte values at the query time; -1 when the window has no sample of that series.
	Total, Used, Free, Reserved, Unattributed int64
	SampleAge                                 time.Duration // |query time − time of the Used sample|
	Usage                                     []Point       // hw.gpu.memory.usage over the window
	Processes                                 []Process
	RetiredPages                              map[string]int64 // by cause
	RetiredPagesPending                       bool
	RemappedRows                              map[string]int64 // by remap type
	RemapPending, RemapFailed                 bool
	Xids                                      []Xid // on this GPU, window before to xidAfter after
}

// Snapshot matches the query to a GPU and returns its state at q.At. It returns false when no
// GPU of the host can be chosen by the rules.
func (s *Store) Snapshot(q Query) (Snapshot, bool) {
	at := q.At.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[q.Host]
	if h == nil {
		return Snapshot{}, false
	}
	g, by := s.match(h, q, at)
	if g == nil {
		return Snapshot{}, false
	}
	return s.snapshot(h, g, by, at, q.PID), true
}

// alive reports whether the GPU reported around at: a point inside the window before it and
// one no later than lookAhead after it.
func (s *Store) alive(g *gpu, at int64) bool {
	if g.newest < at-int64(s.cfg.Window) {
		return false
	}
	for i := range g.gauges {
		if p := g.gauges[i].pts; len(p) > 0 && p[0].t <= at+int64(lookAhead) {
			return true
		}
	}
	for _, p := range g.procs {
		if len(p.s.pts) > 0 && p.s.pts[0].t <= at+int64(lookAhead) {
			return true
		}
	}
	return false
}

func (s *Store) match(h *host, q Query, at int64) (*gpu, string) {
	var live []*gpu
	for _, g := range h.gpus {
		if s.alive(g, at) {
			live = append(live, g)
		}
	}
	// Map iteration order is random; sort so that ties resolve the same way every time.
	sort.Slice(live, func(i, j int) bool { return live[i].key.HWID < live[j].key.HWID })
	if q.PID >= 0 {
		var holders []*gpu
		for _, g := range live {
			if p := g.procs[q.PID]; p != nil && len(p.s.between(at-int64(s.cfg.Window), at+int64(lookAhead))) > 0 {
				holders = append(holders, g)
			}
		}
		if len(holders) == 1 {
			return holders[0], MatchedByPID
		}
		// A process on several GPUs (data parallel in one process): the ordinal picks one.
		if g := byIndex(holders, q.DeviceIndex); g != nil {
			return g, MatchedByPID
		}
	}
	if len(live) == 1 {
		return live[0], MatchedByOnlyGPU
	}
	if g := byIndex(live, q.DeviceIndex); g != nil {
		return g, MatchedByDeviceIndex
	}
	return nil, ""
}

func byIndex(gs []*gpu, idx int) *gpu {
	if idx < 0 {
		return nil
	}
	var found *gpu
	for _, g := range gs {
		if g.info.Index == idx {
			if found != nil {
				return nil // two GPUs claim the ordinal: do not guess
			}
			found = g
		}
	}
	return found
}

// valueAt returns the latest point at or before at, else the first within lookAhead after.
func valueAt(s *series, at int64) (point, bool) {
	if p, ok := s.at(at); ok {
		return p, true
	}
	if len(s.pts) > 0 && s.pts[0].t <= at+int64(lookAhead) {
		return s.pts[0], true
	}
	return point{}, false
}

func (s *Store) snapshot(h *host, g *gpu, by string, at int64, pid int) Snapshot {
	from := at - int64(s.cfg.Window)
	snap := Snapshot{HWID: g.key.HWID, Info: g.info, MatchedBy: by}
	vals := [...]*int64{&snap.Used, &snap.Total, &snap.Free, &snap.Reserved, &snap.Unattributed}
	for k, dst := range vals {
		*dst = -1
		if p, ok := valueAt(&g.gauges[k], at); ok {
			*dst = p.v
			if Kind(k) == Used {
				snap.SampleAge = time.Duration(abs(at - p.t))
			}
		}
	}
	snap.Usage = points(g.gauges[Used].between(from, at))
	snap.RetiredPagesPending = flag(&g.gauges[RetiredPagesPending], at)
	snap.RemapPending = flag(&g.gauges[RemapPending], at)
	snap.RemapFailed = flag(&g.gauges[RemapFailed], at)
	snap.RetiredPages = labelled(g.labelled[0], at)
	snap.RemappedRows = labelled(g.labelled[1], at)
	snap.Processes = s.processes(g, from, at, pid)
	lo, hi := time.Unix(0, from), time.Unix(0, at).Add(xidAfter)
	for _, x := range h.xids {
		mine := x.HWID == g.key.HWID || (x.HWID == "" && x.BusID != "" && x.BusID == g.info.BusID)
		if mine && !x.T.Before(lo) && !x.T.After(hi) {
			snap.Xids = append(snap.Xids, x)
		}
	}
	return snap
}

// processes returns those in the collection nearest the query time, sorted by pid. Only the
// failing process (pid) gets its series: the rules read no other process's history, and
// copying every series of a full window cost more than the classification itself.
func (s *Store) processes(g *gpu, from, at int64, pid int) []Process {
	type cand struct {
		p  *proc
		pt point
	}
	cands := make([]cand, 0, len(g.procs))
	// The reference is the newest collection at or before at, else the earliest after it.
	before, after := int64(-1<<63), int64(1<<63-1)
	for _, p := range g.procs {
		pt, ok := valueAt(&p.s, at)
		if !ok || pt.t < from {
			continue
		}
		cands = append(cands, cand{p, pt})
		if pt.t <= at {
			before = max(before, pt.t)
		} else {
			after = min(after, pt.t)
		}
	}
	ref := before
	if ref == -1<<63 {
		ref = after
	}
	var out []Process
	for _, c := range cands {
		if abs(c.pt.t-ref) > int64(presenceSlack) {
			continue
		}
		p := Process{ProcessInfo: c.p.info, Bytes: c.pt.v}
		if pid >= 0 && int(c.p.info.PID) == pid {
			p.Series = points(c.p.s.between(from, at))
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

func flag(s *series, at int64) bool {
	p, ok := valueAt(s, at)
	return ok && p.v != 0
}

func labelled(m map[string]*series, at int64) map[string]int64 {
	var out map[string]int64
	for label, s := range m {
		if p, ok := valueAt(s, at); ok {
			if out == nil {
				out = make(map[string]int64, len(m))
			}
			out[label] = p.v
		}
	}
	return out
}

func points(ps []point) []Point {
	if len(ps) == 0 {
		return nil
	}
	out := make([]Point, len(ps))
	for i, p := range ps {
		out[i] = Point{T: time.Unix(0, p.t), V: p.v}
	}
	return out
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

package window

import (
	"slices"
	"sync"
	"time"

	"github.com/gpumem/otelcol-gpumem/processor/oomclassifier/internal/gpustate"
)

// Kind names the metric stream a Sample belongs to (docs/metrics.md's names in comments).
type Kind uint8

const (
	Used                Kind = iota // hw.gpu.memory.usage
	Total                           // hw.gpu.memory.limit
	Free                            // nvidia.gpu.memory.free
	Reserved                        // nvidia.gpu.memory.reserved
	Unattributed                    // nvidia.gpu.memory.unattributed
	RetiredPagesPending             // nvidia.gpu.memory.retired_pages.pending
	RemapPending                    // nvidia.gpu.memory.remapped_rows.pending
	RemapFailed                     // nvidia.gpu.memory.remapped_rows.failed
	ProcessesHidden                 // nvidia.gpu.process.hidden
	ProcessBytes                    // nvidia.gpu.process.memory.usage; Sample.Process says whose
	RetiredPages                    // nvidia.gpu.memory.retired_pages; Sample.Label is the cause
	RemappedRows                    // nvidia.gpu.memory.remapped_rows; Sample.Label is the remap type
	numGauges           = ProcessBytes
)

// maxLabels bounds the label values kept per labelled stream; the real ones number two.
const maxLabels = 8

// Config bounds the store. Zero or negative caps mean "no cap" only for tests; the processor
// always passes positive values.
type Config struct {
	Window  time.Duration // history kept per GPU, measured back from its newest sample
	MaxGPUs int           // GPUs kept over all hosts; the least recently updated goes first
	// MaxBytes bounds the heap the GPUs' windows take (as accounted by Bytes); past it the
	// least recently updated GPUs are evicted. 0 means no byte budget.
	MaxBytes           int64
	MaxSamplesPerGPU   int // points kept per series of one GPU
	MaxProcessesPerGPU int // process series kept per GPU
	MaxXidsPerHost     int // Xid events kept per host
	// MaxAllocationsPerGPU bounds the kubelet allocations kept per GPU: one per pod ×
	// container, so a time-sliced GPU has one per replica in use.
	MaxAllocationsPerGPU int
	// MaxAhead is how far past Now a point's timestamp may be. The window is measured back
	// from a GPU's newest point and "caught up" is read from it, so one point from a wrong
	// clock would otherwise push every real point out and make the host look covered.
	MaxAhead time.Duration
	// Now is the collector's clock; nil skips the timestamp check (tests of other things).
	Now func() time.Time
}

// Bounds of a believable value. No GPU holds 64 TiB of device memory (the largest today hold
// under 300 GB), and NVML counts retired pages and remapped rows in the hundreds; anything
// beyond is a corrupt or hostile point, and a rule quoting it would quote nonsense.
const (
	maxPlausibleBytes = int64(1) << 46
	maxPlausibleCount = int64(1) << 32
)

// GPUKey identifies a GPU across hosts: a gateway receives the same UUIDs from many nodes only
// if they are the same devices, but host.name keeps nodes apart where UUIDs are absent or reused.
type GPUKey struct {
	Host string // host.name; "" when the resource has none
	HWID string // hw.id, the GPU UUID
}

// GPUInfo is what the resource says about the device. Empty fields leave the known value alone.
type GPUInfo struct {
	Name  string // hw.name
	BusID string // nvidia.gpu.pci.bus_id, normalised by the caller
	Index int    // nvidia.gpu.index; -1 when absent
}

// ProcessInfo describes a process holding memory on a GPU.
type ProcessInfo struct {
	PID int
	// VPID is process.vpid, the pid inside the process's own pid namespace (what an SDK in a
	// pod logs); 0 when absent, which the receiver does when it equals PID.
	VPID        int
	Name        string // process.executable.name
	ContainerID string // container.id
	PodUID      string // k8s.pod.uid
	PodName     string // k8s.pod.name
	Namespace   string // k8s.namespace.name
	Container   string // k8s.container.name
	Type        string // nvidia.gpu.process.type
	SlurmJob    string // slurm.job.id
	SlurmStep   string // slurm.job.step
}

// Sample is one data point. T is the point's own timestamp in Unix nanoseconds (the hot path
// avoids time.Time); V is the value, bytes or a count.
type Sample struct {
	Kind    Kind
	T       int64
	V       int64
	Label   string      // RetiredPages, RemappedRows
	Process ProcessInfo // ProcessBytes
}

// Xid is a driver Xid event kept as evidence (gpustate, shared with the classifier).
type Xid = gpustate.Xid

// Overflow counts what the caps pushed out during one call; the processor adds these to its
// internal telemetry. Points leaving the window by age are normal and not counted.
type Overflow struct {
	GPUsEvicted      int
	SamplesCapped    int
	ProcessesEvicted int
	XidsCapped       int
	LabelsRejected   int
	AllocsEvicted    int // allocations past MaxAllocationsPerGPU (least recently seen first)
	FutureRejected   int // points stamped more than MaxAhead past Now
	ValuesRejected   int // negative, above the GPU's limit, or beyond any real GPU
}

// Add adds the counts of o.
func (of *Overflow) Add(o Overflow) {
	of.GPUsEvicted += o.GPUsEvicted
	of.SamplesCapped += o.SamplesCapped
	of.ProcessesEvicted += o.ProcessesEvicted
	of.XidsCapped += o.XidsCapped
	of.AllocsEvicted += o.AllocsEvicted
	of.LabelsRejected += o.LabelsRejected
	of.FutureRejected += o.FutureRejected
	of.ValuesRejected += o.ValuesRejected
}

// Store is the metric window. It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	cfg   Config
	hosts map[string]*host
	gpus  int
	bytes int64 // Σ gpu.bytes
	// lru links every GPU, least recently updated first: eviction takes the front and an
	// update moves a GPU to the back, both O(1). The links live in gpu itself (an intrusive
	// list, as container/list would need an Element allocated and type-asserted per GPU).
	lru gpu
}

type host struct {
	gpus map[string]*gpu
	xids []Xid // sorted by T
}

type gpu struct {
	prev, next *gpu  // Store.lru
	bytes      int64 // the heap this GPU's window takes, as the byte budget counts it
	key        GPUKey
	info       GPUInfo
	newest     int64 // newest point of any series: the window is measured back from here
	trimmed    int64 // newest at the last full trim; see Observe
	gauges     [numGauges]series
	labelled   [2]map[string]*series // RetiredPages, RemappedRows
	procs      map[int]*proc
	// order holds the processes in the order of the last Observe's process samples. A
	// collection lists them in the same order each time (NVML's), so the i-th process sample
	// is found at order[i] without hashing its pid; the map is the fallback.
	order []*proc
	// allocs are the kubelet's allocations of this GPU (alloc.go), a handful at most.
	allocs []alloc
}

type proc struct {
	info ProcessInfo
	s    series
	gone bool // deleted from gpu.procs: order may still hold it until the next Observe
	peak peak // the largest point of s, for a workload's peak (peak.go)
}

// New returns an empty store.
func New(cfg Config) *Store {
	s := &Store{cfg: cfg, hosts: make(map[string]*host)}
	s.lru.prev, s.lru.next = &s.lru, &s.lru
	return s
}

// Fixed costs of the budget's accounting, besides the series' arrays (measured with
// runtime.MemStats on the bytes benchmark: a GPU with its maps and host entry, a process
// with its map entry and description: 160 bytes before the Kubernetes names, whose three
// string headers and vpid add 56, its cached peak 24, the Slurm job and step headers 32). The
// names' own bytes are added per process (nameBytes): they come with Kubernetes and Slurm
// processes only, and a long pod name is most of a process entry.
const (
	gpuBytes  = 2048
	procBytes = 272
)

// Observe records the samples of one GPU resource. Points stamped too far ahead of the clock
// and values no GPU can have are rejected and counted, never stored.
func (s *Store) Observe(key GPUKey, info GPUInfo, samples []Sample) Overflow {
	var of Overflow
	latest := int64(1<<63 - 1)
	if s.cfg.Now != nil {
		latest = s.cfg.Now().UnixNano() + int64(s.cfg.MaxAhead)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Drop what cannot be true before a GPU is created for it: a resource of junk only must
	// not evict a real GPU.
	samples = s.sane(key, samples, latest, &of)
	if len(samples) == 0 {
		return of
	}
	g := s.gpu(key, &of)
	s.touch(g)
	before := g.bytes
	g.setInfo(info)
	nproc := 0
	for i := range samples {
		if sm := &samples[i]; sm.Kind == ProcessBytes {
			if sm.T < g.newest-int64(s.cfg.Window) {
				// Too old to be stored (see addPoint): an entry without points would cost
				// a live process its place at the cap.
				continue
			}
			g.addProcess(sm, nproc, s.cfg, &of)
			nproc++
		} else {
			g.add(sm, s.cfg, &of)
		}
	}
	if nproc > 0 {
		clear(g.order[nproc:]) // release the processes no longer listed
		g.order = g.order[:nproc]
	}
	// A full trim walks every series and process; doing it once per 1/64 of the window keeps
	// observation cheap while holding at most that sliver of extra history.
	if g.newest-g.trimmed >= int64(s.cfg.Window)/64 {
		g.trim(s.cfg)
		g.trimmed = g.newest
	}
	s.bytes += g.bytes - before
	// The GPU just updated is at the back: the budget never evicts it to make room for itself.
	for s.cfg.MaxBytes > 0 && s.bytes > s.cfg.MaxBytes && s.lru.next != g {
		s.evict(s.lru.next, key.Host)
		of.GPUsEvicted++
	}
	return of
}

// touch moves g to the back of the LRU list.
func (s *Store) touch(g *gpu) {
	if g.next != nil {
		g.prev.next, g.next.prev = g.next, g.prev
	}
	g.prev, g.next = s.lru.prev, &s.lru
	s.lru.prev.next = g
	s.lru.prev = g
}

// sane filters samples in place, keeping the plausible ones. A byte value must not exceed the
// GPU's limit: the one in this batch, else the newest stored, else maxPlausibleBytes.
func (s *Store) sane(key GPUKey, samples []Sample, latest int64, of *Overflow) []Sample {
	limit := int64(-1)
	for i := range samples {
		if sm := &samples[i]; sm.Kind == Total && sm.V > 0 && sm.V <= maxPlausibleBytes && sm.T <= latest {
			limit = max(limit, sm.V)
		}
	}
	if limit < 0 {
		limit = maxPlausibleBytes
		if h := s.hosts[key.Host]; h != nil {
			if g := h.gpus[key.HWID]; g != nil {
				if tot := &g.gauges[Total]; tot.len() > 0 {
					limit = tot.last.v
				}
			}
		}
	}
	n := 0
	for i := range samples {
		sm := &samples[i]
		bound := limit
		switch sm.Kind {
		case Total:
			bound = maxPlausibleBytes
		case RetiredPages, RemappedRows, RetiredPagesPending, RemapPending, RemapFailed, ProcessesHidden:
			bound = maxPlausibleCount
		}
		switch {
		case sm.T > latest:
			of.FutureRejected++
			continue
		case sm.V < 0 || sm.V > bound:
			of.ValuesRejected++
			continue
		}
		if n != i { // compact only once something was dropped: a Sample is over 100 bytes
			samples[n] = *sm
		}
		n++
	}
	return samples[:n]
}

// gpu finds or creates the entry for key, evicting the least recently updated GPU when full.
func (s *Store) gpu(key GPUKey, of *Overflow) *gpu {
	h := s.hosts[key.Host]
	if h == nil {
		h = &host{gpus: make(map[string]*gpu)}
		s.hosts[key.Host] = h
	}
	if g := h.gpus[key.HWID]; g != nil {
		return g
	}
	if s.cfg.MaxGPUs > 0 && s.gpus >= s.cfg.MaxGPUs && s.lru.next != &s.lru {
		s.evict(s.lru.next, key.Host)
		of.GPUsEvicted++
	}
	g := &gpu{key: key, info: GPUInfo{Index: -1}, procs: make(map[int]*proc), bytes: gpuBytes}
	g.gauges[Total].step = true
	g.gauges[RetiredPagesPending].step = true
	g.gauges[RemapPending].step = true
	g.gauges[RemapFailed].step = true
	g.gauges[ProcessesHidden].step = true
	h.gpus[key.HWID] = g
	s.gpus++
	s.bytes += gpuBytes
	return g
}

// evict removes g, the least recently updated GPU, in O(1). Its host goes too when nothing
// is left of it, unless it is keep, the host being updated.
func (s *Store) evict(g *gpu, keep string) {
	g.prev.next, g.next.prev = g.next, g.prev
	g.prev, g.next = nil, nil
	h := s.hosts[g.key.Host]
	delete(h.gpus, g.key.HWID)
	s.gpus--
	s.bytes -= g.bytes
	if len(h.gpus) == 0 && len(h.xids) == 0 && g.key.Host != keep {
		delete(s.hosts, g.key.Host)
	}
}

// addProcess adds the i-th process sample of an Observe call.
func (g *gpu) addProcess(sm *Sample, i int, cfg Config, of *Overflow) {
	var p *proc
	if i < len(g.order) {
		if q := g.order[i]; q.info.PID == sm.Process.PID && !q.gone {
			p = q
		}
	}
	if p == nil {
		p = g.procs[sm.Process.PID]
	}
	if p == nil {
		if cfg.MaxProcessesPerGPU > 0 && len(g.procs) >= cfg.MaxProcessesPerGPU {
			g.evictOldestProcess()
			of.ProcessesEvicted++
		}
		p = &proc{info: sm.Process}
		g.procs[sm.Process.PID] = p
		g.bytes += procBytes + nameBytes(&p.info)
	} else if sm.T >= p.s.newest() && p.info != sm.Process {
		g.bytes += nameBytes(&sm.Process) - nameBytes(&p.info)
		p.info = sm.Process // the newest description wins: names and containers can change
	}
	if i < len(g.order) {
		g.order[i] = p
	} else {
		g.order = append(g.order, p)
	}
	g.addPoint(&p.s, sm.T, sm.V, cfg, of)
	p.peak.added(&p.s, sm.T, sm.V)
}

// add adds a sample of any kind but ProcessBytes (see addProcess).
func (g *gpu) add(sm *Sample, cfg Config, of *Overflow) {
	var dst *series
	switch {
	case sm.Kind < numGauges:
		dst = &g.gauges[sm.Kind]
	case sm.Kind == RetiredPages || sm.Kind == RemappedRows:
		i := int(sm.Kind - RetiredPages)
		m := g.labelled[i]
		if m == nil {
			m = make(map[string]*series, 2)
			g.labelled[i] = m
		}
		ls := m[sm.Label]
		if ls == nil {
			if len(m) >= maxLabels {
				of.LabelsRejected++
				return
			}
			ls = &series{step: true}
			m[sm.Label] = ls
		}
		dst = ls
	default:
		return // unknown kind: ignore rather than fail on a caller's mistake
	}
	g.addPoint(dst, sm.T, sm.V, cfg, of)
}

// addPoint adds a point to one of the GPU's series, within the per-series cap.
func (g *gpu) addPoint(dst *series, t, v int64, cfg Config, of *Overflow) {
	if t < g.newest-int64(cfg.Window) {
		// Older than the window: the next trim would drop it. Merging it into the compressed
		// series first would re-encode the whole series, which a sender of ancient points
		// must not be able to make every point cost.
		return
	}
	before := dst.footprint()
	dst.add(t, v)
	// The cap holds on every add; the window is applied in the periodic trim.
	if cfg.MaxSamplesPerGPU > 0 && dst.len() > cfg.MaxSamplesPerGPU {
		over := dst.len() - cfg.MaxSamplesPerGPU
		dst.drop(over)
		of.SamplesCapped += over
	}
	g.bytes += dst.footprint() - before
	if t > g.newest {
		g.newest = t
	}
}

func (g *gpu) evictOldestProcess() {
	victim, oldest := -1, int64(0)
	for pid, p := range g.procs {
		if n := p.s.newest(); victim == -1 || n < oldest {
			victim, oldest = pid, n
		}
	}
	if p := g.procs[victim]; p != nil {
		g.forget(p)
	}
}

// forget deletes a process; order may still hold it until the next Observe.
func (g *gpu) forget(p *proc) {
	p.gone = true
	delete(g.procs, p.info.PID)
	g.bytes -= procBytes + nameBytes(&p.info) + p.s.footprint()
}

// nameBytes is what a process's Kubernetes names hold beyond procBytes.
func nameBytes(p *ProcessInfo) int64 {
	return int64(len(p.PodName) + len(p.Namespace) + len(p.Container) + len(p.SlurmJob) + len(p.SlurmStep))
}

// trim applies the window to every series of the GPU and forgets processes with no point
// left inside it.
func (g *gpu) trim(cfg Config) {
	cutoff := g.newest - int64(cfg.Window)
	for i := range g.gauges {
		g.gauges[i].trim(cutoff)
	}
	for _, m := range g.labelled {
		for _, ls := range m {
			ls.trim(cutoff)
		}
	}
	g.trimAllocs(cutoff)
	forgot := false
	for _, p := range g.procs {
		if p.s.newest() < cutoff {
			g.forget(p)
			forgot = true
			continue
		}
		p.s.trim(cutoff)
		p.peak.kept(&p.s)
	}
	if forgot { // order must not keep their series alive while no collection lists processes
		g.order = slices.DeleteFunc(g.order, func(p *proc) bool { return p.gone })
	}
}

// Covered reports whether the host has a metric point at or after at: the metrics describing
// that moment have arrived, so an OOM at that time need not wait for more.
func (s *Store) Covered(hostName string, at time.Time) bool {
	t := at.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hosts[hostName]
	if h == nil {
		return false
	}
	for _, g := range h.gpus {
		if g.newest >= t {
			return true
		}
	}
	return false
}

// Bytes returns the heap the store's windows take, as the byte budget counts it: the series'
// arrays exactly, the maps and descriptions around them by a measured estimate.
func (s *Store) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Len returns how many GPUs the store holds.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gpus
}

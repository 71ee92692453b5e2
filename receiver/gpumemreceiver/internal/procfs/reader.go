package procfs

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
)

// maxCached bounds the cache when a caller forgets Retain: far above the
// number of processes that hold GPU contexts on one node.
const maxCached = 4096

// Info is what the proc tree says about one process.
type Info struct {
	// ExecutableName is the base name of the /proc/<pid>/exe link's target where that link
	// can be read (semconv's process.executable.name on Linux), else Comm.
	ExecutableName string
	// Comm is the executable name from /proc/<pid>/comm (at most 15 bytes,
	// as the kernel truncates it), without the trailing newline.
	Comm string
	// ContainerID is the 64-hex-digit container ID from the cgroup path, or "".
	ContainerID string
	// PodUID is the Kubernetes pod UID from the cgroup path, or "".
	PodUID string
	// SlurmJobID and SlurmStep are the Slurm job and step from the cgroup path, or ""
	// (see Cgroup).
	SlurmJobID string
	SlurmStep  string
	// VPID is the pid in the process's own (innermost) pid namespace, from
	// the NSpid line of /proc/<pid>/status; 0 when the kernel does not say.
	VPID int
}

// Reader looks processes up in a proc tree and caches what it found.
// It is safe for concurrent use.
type Reader struct {
	fsys fs.FS

	mu    sync.Mutex
	cache map[uint32]Info
}

// New returns a Reader over fsys, whose root is the proc tree:
// os.DirFS("/proc"), os.DirFS("/host/proc"), or an in-memory tree.
func New(fsys fs.FS) *Reader {
	return &Reader{fsys: fsys, cache: make(map[uint32]Info)}
}

// Lookup returns what the proc tree says about pid. A pid seen before is
// answered from the cache without touching the tree: its cgroup and namespace
// are fixed for its life, and Retain drops it once it leaves the GPU, so a
// reused pid is read afresh. A rename after the first lookup is not seen.
//
// When a file cannot be read, Lookup returns the fields it did read and an
// error wrapping the first failure; a process that has exited yields an error
// wrapping fs.ErrNotExist. Failed lookups are not cached.
func (r *Reader) Lookup(pid uint32) (Info, error) {
	r.mu.Lock()
	info, ok := r.cache[pid]
	r.mu.Unlock()
	if ok {
		return info, nil
	}

	info, err := r.read(pid)
	if err != nil {
		return info, err
	}
	r.mu.Lock()
	if len(r.cache) < maxCached {
		r.cache[pid] = info
	}
	r.mu.Unlock()
	return info, nil
}

// Retain drops every cached pid not in live. The scraper calls it once per
// scrape with the pids NVML reported, which keeps the cache as small as the
// set of GPU processes and makes a recycled pid be read again.
func (r *Reader) Retain(live map[uint32]struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid := range r.cache {
		if _, ok := live[pid]; !ok {
			delete(r.cache, pid)
		}
	}
}

// read reads the exe link and the three files, keeping whatever succeeds. An unreadable
// exe link is no failure (see exeBase).
func (r *Reader) read(pid uint32) (Info, error) {
	dir := strconv.FormatUint(uint64(pid), 10)
	var (
		info     Info
		firstErr error
	)
	fail := func(err error) {
		if firstErr == nil {
			firstErr = fmt.Errorf("look up pid %d: %w", pid, err)
		}
	}

	if b, err := fs.ReadFile(r.fsys, dir+"/comm"); err != nil {
		fail(err)
	} else {
		info.Comm = strings.TrimSuffix(string(b), "\n")
	}
	info.ExecutableName = exeBase(r.fsys, dir)
	if info.ExecutableName == "" {
		info.ExecutableName = info.Comm
	}
	if b, err := fs.ReadFile(r.fsys, dir+"/cgroup"); err != nil {
		fail(err)
	} else {
		cg := ParseCgroup(string(b))
		info.ContainerID, info.PodUID, info.SlurmJobID, info.SlurmStep = cg.ContainerID, cg.PodUID, cg.SlurmJobID, cg.SlurmStep
	}
	if b, err := fs.ReadFile(r.fsys, dir+"/status"); err != nil {
		fail(err)
	} else {
		info.VPID = parseNSpid(string(b))
	}
	return info, firstErr
}

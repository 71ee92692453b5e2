package simnvml

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing/fstest"
	"time"
)

// procFS is the simulated proc tree. Files are made once; each Open checks
// the owning process is alive at that moment, so exits and appearances
// follow the clock like /proc does.
type procFS struct {
	sim   *Sim
	files fstest.MapFS
	// links are the exe links, apart from files: opening one would follow it to an
	// executable the tree does not hold, so they are only read as links.
	links fstest.MapFS
	// lives are each pid's process entries (one per GPU or MIG instance it uses).
	lives map[string][]procLife
}

// procLife is one entry of a process: where it runs decides when it exists.
type procLife struct {
	dev  *device
	inst *MIGInstance // nil on a whole GPU
	p    *Process
}

// live reports whether the entry's process runs at scenario time t: a whole-GPU process
// while the GPU is not in MIG mode, an instance's while the GPU is and the instance exists.
func (l procLife) live(t time.Duration) bool {
	if !alive(l.p, t) {
		return false
	}
	if l.inst == nil {
		return !l.dev.migOn(t)
	}
	return l.dev.migOn(t) && l.inst.live(t)
}

var (
	_ fs.FS         = (*procFS)(nil)
	_ fs.ReadFileFS = (*procFS)(nil)
	_ fs.ReadLinkFS = (*procFS)(nil)
)

func newProcFS(s *Sim) *procFS {
	p := &procFS{sim: s, files: fstest.MapFS{}, links: fstest.MapFS{}, lives: map[string][]procLife{}}
	s.scn.eachProcess(func(_ string, proc *Process, g *GPU, inst *MIGInstance) {
		dir := strconv.FormatUint(uint64(proc.PID), 10)
		p.lives[dir] = append(p.lives[dir], procLife{dev: s.devices[*g.Index], inst: inst, p: proc})
		if _, done := p.files[dir+"/comm"]; done {
			return // same pid on another GPU: Normalize checked it matches
		}
		p.files[dir+"/comm"] = &fstest.MapFile{Data: []byte(comm(proc.Name) + "\n"), Mode: 0o444}
		p.files[dir+"/cgroup"] = &fstest.MapFile{Data: []byte(cgroupOf(proc)), Mode: 0o444}
		p.files[dir+"/status"] = &fstest.MapFile{Data: []byte(statusOf(proc)), Mode: 0o444}
		if exe := exeOf(proc); exe != "" {
			p.links[dir+"/exe"] = &fstest.MapFile{Data: []byte(exe), Mode: fs.ModeSymlink | 0o777}
		}
	})
	return p
}

// comm truncates a name as the kernel does (TASK_COMM_LEN 16, with the NUL).
func comm(name string) string {
	if len(name) > 15 {
		return name[:15]
	}
	return name
}

// exeOf is the target of the process's exe link: its exe key, else /usr/bin/<name>
// (the name untruncated, as the link has it); "-" means the link cannot be read.
func exeOf(p *Process) string {
	switch p.Exe {
	case "-":
		return ""
	case "":
		return "/usr/bin/" + p.Name
	default:
		return p.Exe
	}
}

// cgroupOf is the process's cgroup file: the literal one, or a cgroup v2
// path of the shape containerd on Kubernetes (systemd driver) or docker writes.
func cgroupOf(p *Process) string {
	switch {
	case p.Cgroup != "":
		if !strings.HasSuffix(p.Cgroup, "\n") {
			return p.Cgroup + "\n"
		}
		return p.Cgroup
	case p.PodUID != "":
		uid := strings.ReplaceAll(p.PodUID, "-", "_")
		return fmt.Sprintf("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope\n", uid, p.ContainerID)
	case p.ContainerID != "":
		return fmt.Sprintf("0::/system.slice/docker-%s.scope\n", p.ContainerID)
	default:
		return "0::/user.slice/user-1000.slice/session-2.scope\n"
	}
}

// statusOf is the part of /proc/<pid>/status that matters here.
func statusOf(p *Process) string {
	ns := strconv.FormatUint(uint64(p.PID), 10)
	if p.VPID > 0 {
		ns += "\t" + strconv.Itoa(p.VPID)
	}
	return fmt.Sprintf("Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t1\nNStgid:\t%s\nNSpid:\t%s\n",
		comm(p.Name), p.PID, p.PID, ns, ns)
}

// live reports whether the pid directory dir exists now.
func (p *procFS) live(dir string) bool {
	t := p.sim.ScenarioTime()
	for _, l := range p.lives[dir] {
		if l.live(t) {
			return true
		}
	}
	return false
}

// visible reports whether name lies in a live pid's directory.
func (p *procFS) visible(name string) bool {
	dir, _, _ := strings.Cut(name, "/")
	return p.live(dir)
}

// Open implements fs.FS.
func (p *procFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return p.snapshot().Open(".")
	}
	if !p.visible(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return p.files.Open(name)
}

// ReadFile implements fs.ReadFileFS.
func (p *procFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	if !p.visible(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return p.files.ReadFile(name)
}

// ReadLink implements fs.ReadLinkFS.
func (p *procFS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) || !p.visible(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrNotExist}
	}
	return p.links.ReadLink(name)
}

// Lstat implements fs.ReadLinkFS.
func (p *procFS) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) || !p.visible(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	if info, err := p.links.Lstat(name); err == nil {
		return info, nil
	}
	return p.files.Lstat(name)
}

// snapshot is the tree of live processes, for listing the root.
func (p *procFS) snapshot() fstest.MapFS {
	snap := fstest.MapFS{}
	for name, f := range p.files {
		if p.visible(name) {
			snap[name] = f
		}
	}
	return snap
}

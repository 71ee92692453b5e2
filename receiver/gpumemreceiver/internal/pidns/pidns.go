// Package pidns tells, once at start, whether the collector runs in the PID namespace that
// holds the node's workloads, and how the configured procfs relates to it.
//
// It matters because NVIDIA's driver, since 535.113.01, translates every pid it reports
// into the caller's PID namespace and leaves out the processes the caller cannot see
// (NVIDIA/open-gpu-kernel-modules at df1c9a3de2be4b130f4fc7680f7198193d8ac6ad,
// src/nvidia/src/kernel/gpu/gpu_rmapi.c: _gpuConvertPid, whose NV_ERR_OBJECT_NOT_FOUND
// skips the process; kernel-open/nvidia/os-interface.c: os_find_ns_pid is pid_vnr, 0 for a
// task outside the caller's namespace; the code first appears in that repository's
// 535.113.01 commit f59818b7517a913d93adf714f1f45ae69906e207).
//
// Two kernel facts do the work, both readable without ptrace rights:
//
//   - The "NSpid:" line of /proc/<pid>/status lists the task's pid in every namespace from
//     the one the procfs belongs to down to the task's own (Linux fs/proc/array.c,
//     task_state: "for (g = ns->level; g <= pid->level; g++)"), and <procfs>/self
//     resolves only where the reader is visible (fs/proc/self.c, proc_self_get_link: ENOENT
//     when the reader has no pid in that namespace). So <proc_root>/self/status tells how
//     many levels the collector sits below proc_root's namespace.
//   - The initial PID namespace has the fixed inode PROC_PID_INIT_INO = 0xEFFFFFFC (Linux
//     include/linux/proc_ns.h), which readlink(/proc/self/ns/pid) shows as pid:[4026531836].
package pidns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// InitIno is the inode of the initial PID namespace (PROC_PID_INIT_INO, include/linux/proc_ns.h).
const InitIno = 0xEFFFFFFC

// Verdict is what Detect concluded.
type Verdict int

const (
	// NotChecked: no detection ran (the simulated backend, a test's backend).
	NotChecked Verdict = iota
	// Host: the collector is in the initial PID namespace (bare metal, systemd, hostPID on a
	// node that is a machine).
	Host
	// HostLike: not the initial namespace, but the collector's own namespace holds processes
	// of namespaces below it, as a node that is itself a container (kind) shows its pods'
	// processes to its hostPID pods. NVML lists those processes; only a node's processes
	// outside that container would be missed, and there are none of a workload.
	HostLike
	// Own: the collector is in a PID namespace of its own with no namespace below it (a pod
	// without hostPID): NVML lists none of the other pods' processes.
	Own
	// Below: proc_root belongs to a namespace above the collector's (the host's /proc
	// mounted at /host/proc without hostPID): NVML lists only the collector's namespace, and
	// its pids are not proc_root's numbers.
	Below
	// Unknown: the files that tell could not be read; nothing is concluded.
	Unknown
)

func (v Verdict) String() string {
	switch v {
	case NotChecked:
		return "not_checked"
	case Host:
		return "host"
	case HostLike:
		return "host_like"
	case Own:
		return "own"
	case Below:
		return "below_proc_root"
	default:
		return "unknown"
	}
}

// Hides says whether a driver that translates pids lists only part of the node's processes
// to a collector with this verdict.
func (v Verdict) Hides() bool { return v == Own || v == Below }

// Result is what Detect found.
type Result struct {
	Verdict Verdict
	// NS is the inode of the collector's PID namespace; 0 when unread.
	NS uint64
	// Depth is how many levels the collector is below proc_root's namespace (the NSpid
	// fields of <proc_root>/self/status less one); -1 when proc_root does not show the
	// collector or the line could not be read.
	Depth int
	// NestedPID is a process in a namespace below the collector's, the evidence for
	// HostLike; 0 when none was found.
	NestedPID int
	// Err is why the verdict is Unknown, or a lesser read failure behind another verdict.
	Err error
	// Took is how long the detection took.
	Took time.Duration
}

// Detect reads procRoot (the configured processes.proc_root) and selfProc (the collector's
// own /proc; "/proc" outside tests).
func Detect(procRoot, selfProc string) Result {
	start := time.Now()
	r := detect(procRoot, selfProc)
	r.Took = time.Since(start)
	return r
}

func detect(procRoot, selfProc string) Result {
	r := Result{Depth: -1}
	link := filepath.Join(selfProc, "self", "ns", "pid")
	ns, nsErr := readNSLink(link)
	r.NS = ns
	if nsErr == nil && ns == InitIno {
		r.Verdict = Host
		r.Depth, _ = selfDepth(procRoot)
		return r
	}
	depth, depthErr := selfDepth(procRoot)
	r.Depth = depth
	switch {
	case depthErr != nil && errors.Is(depthErr, fs.ErrNotExist) && nsErr == nil:
		// proc_root is a namespace's that does not contain the collector: what NVML lists
		// cannot be told from it.
		r.Verdict, r.Err = Unknown, fmt.Errorf("%s does not show the collector (a procfs of a namespace it is not in): %w", procRoot, depthErr)
	case depthErr != nil:
		r.Verdict, r.Err = Unknown, errors.Join(nsErr, depthErr)
	case depth > 0:
		r.Verdict, r.Err = Below, nsErr
	default:
		// proc_root is the collector's own namespace: a node container (kind) shows the
		// processes of the namespaces below it; a pod without hostPID shows only its own.
		pid, err := findNested(procRoot)
		r.NestedPID = pid
		r.Err = errors.Join(nsErr, err)
		if pid != 0 {
			r.Verdict = HostLike
		} else {
			r.Verdict = Own
		}
	}
	return r
}

// readNSLink parses a namespace link ("pid:[4026531836]") into its inode.
func readNSLink(path string) (uint64, error) {
	target, err := os.Readlink(path)
	if err != nil {
		return 0, fmt.Errorf("read the collector's PID namespace: %w", err)
	}
	inner, ok := strings.CutPrefix(target, "pid:[")
	inner, ok2 := strings.CutSuffix(inner, "]")
	if !ok || !ok2 {
		return 0, fmt.Errorf("read the collector's PID namespace: %s links to %q, not pid:[inode]", path, target)
	}
	ino, err := strconv.ParseUint(inner, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read the collector's PID namespace: %s links to %q: %w", path, target, err)
	}
	return ino, nil
}

// selfDepth is the number of NSpid fields of <procRoot>/self/status less one.
func selfDepth(procRoot string) (int, error) {
	path := filepath.Join(procRoot, "self", "status")
	raw, err := os.ReadFile(path)
	if err != nil {
		return -1, fmt.Errorf("read the collector's pids: %w", err)
	}
	n := nspidFields(string(raw))
	if n == 0 {
		return -1, fmt.Errorf("read the collector's pids: %s has no NSpid line (a kernel before 4.1)", path)
	}
	return n - 1, nil
}

// nspidFields counts the pids on the NSpid line; 0 without one.
func nspidFields(status string) int {
	for len(status) > 0 {
		var line string
		line, status, _ = strings.Cut(status, "\n")
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return len(strings.Fields(rest))
		}
	}
	return 0
}

// maxScan bounds findNested: a node container shows a pod's process among its first few
// hundred; a pod without hostPID has a handful of processes in all.
const maxScan = 4096

// findNested returns a process of procRoot whose NSpid has more than one field (a process
// in a namespace below procRoot's), or 0.
func findNested(procRoot string) (int, error) {
	d, err := os.Open(procRoot)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", procRoot, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", procRoot, err)
	}
	scanned := 0
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if scanned++; scanned > maxScan {
			break
		}
		raw, err := os.ReadFile(filepath.Join(procRoot, name, "status"))
		if err != nil {
			continue // exited since the listing
		}
		if nspidFields(string(raw)) > 1 {
			return pid, nil
		}
	}
	return 0, nil
}

// TranslatesPids says whether an NVIDIA driver of this version reports pids in the caller's
// namespace (535.113.01 and later; see the package comment). A version that does not parse
// is taken as a current one.
func TranslatesPids(driverVersion string) bool {
	parts := strings.Split(driverVersion, ".")
	var v [3]int
	for i := 0; i < len(v) && i < len(parts); i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return true
		}
		v[i] = n
	}
	if len(parts) < 2 {
		return true
	}
	switch {
	case v[0] != 535:
		return v[0] > 535
	case v[1] != 113:
		return v[1] > 113
	default:
		return v[2] >= 1
	}
}

package procfs

import "strings"

// Cgroup is what a /proc/<pid>/cgroup file says about where a process runs. A field is
// empty when the file does not say.
type Cgroup struct {
	// ContainerID is the 64-hex-digit id of the process's container.
	ContainerID string
	// PodUID is the Kubernetes pod UID (or a static pod's 32-hex-digit config hash).
	PodUID string
	// SlurmJobID is the Slurm job the process runs in: the numeric job id, or on cgroup v2
	// under Slurm 26.05 and later with the default CgroupJobIdPaths=no the job's SLUID
	// ("s" and 13 Crockford base32 digits), which scontrol, squeue and sacct take in its place.
	SlurmJobID string
	// SlurmStep is the job step: its number, "batch", "extern" or "interactive"; a
	// heterogeneous step's component follows a '+' ("0+1").
	SlurmStep string
}

// ParseCgroup extracts the container, Kubernetes pod and Slurm job from the content of a
// /proc/<pid>/cgroup file. It understands cgroup v1 (one line per hierarchy) and v2
// ("0::/path"), the path shapes of docker, containerd, cri-o and podman with both the
// cgroupfs and the systemd cgroup drivers, paths relative to the reader's cgroup namespace
// ("/../../burstable/pod<uid>/<id>"), and Slurm's job/step cgroups.
//
// Only the unambiguous forms are accepted: a container ID is 64 hex digits, a pod UID a
// UUID (or the 32-hex-digit config hash of a static pod) under a "kubepods" path or, in a
// path relative to the reader's cgroup namespace, under "..", "burstable" or "besteffort";
// a Slurm job a "job_<id>" (or SLUID) segment directly above a "step_<step>" one.
// A process outside any container or job yields the zero Cgroup.
func ParseCgroup(content string) Cgroup {
	var cg Cgroup
	for len(content) > 0 {
		var line string
		line, content, _ = strings.Cut(content, "\n")
		// hierarchy-ID:controller-list:cgroup-path; the path may itself hold ':'.
		_, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		_, path, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		parseCgroupPath(strings.TrimSpace(path), &cg)
		// A Slurm job's v1 file names the job on several lines; the loop reads them all
		// (about a dozen short lines) rather than guess which hierarchy carries it.
		if cg.ContainerID != "" && cg.PodUID != "" {
			break
		}
	}
	return cg
}

// parseCgroupPath fills the fields of cg still empty from one cgroup path. The innermost
// container-looking segment wins: runtimes nest helper cgroups below the container's scope.
func parseCgroupPath(path string, cg *Cgroup) {
	// The kubelet names the QoS and pod cgroups "kubepods[/<qos>]/pod<uid>" (cgroupfs
	// driver) or "kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice"
	// (systemd driver): kubernetes/kubernetes pkg/kubelet/cm/cgroup_manager_linux.go
	// (CgroupName.ToSystemd, escapeSystemdCgroupName). A reader in another cgroup
	// namespace sees the path relative to its own root, each level above it a "..", so a
	// cgroupfs path may have lost its "kubepods" segment (cgroup_namespaces(7)).
	inKubepods := strings.Contains(path, "kubepods")
	relative := strings.HasPrefix(path, "/../")
	var inner string // the segment below seg, for Slurm's job_<id>/step_<step> pair
	for path != "" {
		var seg string
		// ':' separates too: containerd's systemd driver, when systemd does not
		// own the tree, writes "<pod slice>:cri-containerd:<id>" literally.
		if i := strings.LastIndexAny(path, "/:"); i >= 0 {
			seg, path = path[i+1:], path[:i]
		} else {
			seg, path = path, ""
		}
		if cg.ContainerID == "" {
			cg.ContainerID = containerFromSegment(seg)
		}
		if cg.PodUID == "" && (inKubepods || relative && podParentInNamespace(path)) {
			cg.PodUID = podFromSegment(seg)
		}
		if cg.SlurmJobID == "" && isSlurmJob(seg) {
			if step, ok := slurmStep(inner); ok {
				cg.SlurmJobID, cg.SlurmStep = strings.TrimPrefix(seg, "job_"), step
			}
		}
		inner = seg
	}
}

// podParentInNamespace reports whether the segment that ends path may hold a kubelet pod
// cgroup in a path relative to the reader's cgroup namespace: a ".." (the pod sits at a
// level the reader cannot name, such as kubepods itself) or a QoS class cgroup.
func podParentInNamespace(path string) bool {
	parent := path[strings.LastIndexByte(path, '/')+1:]
	return parent == ".." || parent == "burstable" || parent == "besteffort"
}

// isSlurmJob reports whether seg names a Slurm job cgroup: "job_<id>" (cgroup v1, and v2
// with CgroupJobIdPaths=yes or before 26.05) or the job's SLUID (v2 from 26.05 on). Slurm
// builds them in src/plugins/cgroup/v1/xcgroup.c (xcgroup_create_hierarchy,
// "%s/uid_%u" then "%s/job_%u") and src/plugins/cgroup/v2/cgroup_v2.c
// (cgroup_p_step_create: "/job_%u" or print_sluid), SchedMD/slurm commit 284c3b95f08a.
func isSlurmJob(seg string) bool {
	if id, ok := strings.CutPrefix(seg, "job_"); ok {
		return isUint32(id)
	}
	return isSLUID(seg)
}

// slurmStep returns the step a "step_<step>" segment names. Slurm formats the step with
// log_build_step_id_str (src/common/log.c): a number, "batch", "extern", "interactive",
// and for a heterogeneous job's component "<number>+<component>". "TBD" (a pending step)
// is never a running process's cgroup and is refused with everything else.
func slurmStep(seg string) (string, bool) {
	step, ok := strings.CutPrefix(seg, "step_")
	if !ok {
		return "", false
	}
	switch step {
	case "batch", "extern", "interactive":
		return step, true
	}
	num, comp, het := strings.Cut(step, "+")
	if !isUint32(num) || het && !isUint32(comp) {
		return "", false
	}
	return step, true
}

// isUint32 reports whether s is a decimal uint32 without sign or leading zero, as Slurm
// prints job and step ids with %u.
func isUint32(s string) bool {
	if s == "" || len(s) > 10 || len(s) > 1 && s[0] == '0' {
		return false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + uint64(s[i]-'0')
	}
	return n <= 1<<32-1
}

// isSLUID reports whether s is a Slurm SLUID as print_sluid writes it (src/common/sluid.c):
// "s" and 13 digits of Crockford's base32 alphabet, the first holding the 64-bit value's
// top 4 bits (0-F).
func isSLUID(s string) bool {
	if len(s) != 14 || s[0] != 's' || !(isDigit(s[1]) || 'A' <= s[1] && s[1] <= 'F') {
		return false
	}
	for i := 2; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && (c < 'A' || c > 'Z' || c == 'I' || c == 'L' || c == 'O' || c == 'U') {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scopePrefixes are the systemd scope names runtimes give a container's cgroup.
// Conmon scopes (cri-o's and podman's monitor process) are deliberately absent:
// the monitor is not the container.
var scopePrefixes = []string{"docker-", "cri-containerd-", "crio-", "libpod-", "containerd-"}

// containerFromSegment returns the container ID one path segment names:
// "<id>" (cgroupfs driver) or "<runtime>-<id>.scope" (systemd driver).
func containerFromSegment(seg string) string {
	if isHex(seg, 64) {
		return seg
	}
	// cri-o with the cgroupfs driver writes "crio-<id>" without ".scope".
	id := strings.TrimSuffix(seg, ".scope")
	for _, p := range scopePrefixes {
		if rest, ok := strings.CutPrefix(id, p); ok && isHex(rest, 64) {
			return rest
		}
	}
	return ""
}

// podFromSegment returns the pod UID in "pod<uid>" (cgroupfs driver) or
// "kubepods[-<qos>]-pod<uid_with_underscores>.slice" (systemd driver).
func podFromSegment(seg string) string {
	seg = strings.TrimSuffix(seg, ".slice")
	var uid string
	switch {
	case strings.HasPrefix(seg, "pod"):
		uid = seg[len("pod"):]
	case strings.Contains(seg, "kubepods"):
		// Also matches kind's "kubelet-kubepods-…-pod<uid>.slice" nesting.
		i := strings.LastIndex(seg, "-pod")
		if i < 0 {
			return ""
		}
		// systemd escapes '-' in unit names, so the kubelet writes the UID with '_'.
		uid = strings.ReplaceAll(seg[i+len("-pod"):], "_", "-")
	default:
		return ""
	}
	if isUUID(uid) || isHex(uid, 32) {
		return uid
	}
	return ""
}

// isHex reports whether s is exactly n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

// isUUID reports whether s has the 8-4-4-4-12 lowercase hex shape.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHexDigit(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f')
}

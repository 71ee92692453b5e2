package procfs

import "strings"

// ParseCgroup extracts the container ID and Kubernetes pod UID from the
// content of a /proc/<pid>/cgroup file. It understands cgroup v1 (one line per
// hierarchy) and v2 ("0::/path") and the path shapes of docker, containerd,
// cri-o and podman, with both the cgroupfs and the systemd cgroup drivers.
// Either result is empty when the file does not say.
//
// Only the unambiguous forms are accepted: a container ID is 64 hex digits,
// a pod UID a UUID (or the 32-hex-digit config hash of a static pod) found
// under a "kubepods" path. A process outside any container yields "", "".
func ParseCgroup(content string) (containerID, podUID string) {
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
		cid, pod := parseCgroupPath(strings.TrimSpace(path))
		if containerID == "" {
			containerID = cid
		}
		if podUID == "" {
			podUID = pod
		}
		if containerID != "" && podUID != "" {
			break
		}
	}
	return containerID, podUID
}

// parseCgroupPath looks at one cgroup path. The innermost container-looking
// segment wins: runtimes nest helper cgroups below the container's scope.
func parseCgroupPath(path string) (containerID, podUID string) {
	inKubepods := strings.Contains(path, "kubepods")
	for path != "" {
		var seg string
		// ':' separates too: containerd's systemd driver, when systemd does not
		// own the tree, writes "<pod slice>:cri-containerd:<id>" literally.
		if i := strings.LastIndexAny(path, "/:"); i >= 0 {
			seg, path = path[i+1:], path[:i]
		} else {
			seg, path = path, ""
		}
		if containerID == "" {
			containerID = containerFromSegment(seg)
		}
		if podUID == "" && inKubepods {
			podUID = podFromSegment(seg)
		}
	}
	return containerID, podUID
}

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

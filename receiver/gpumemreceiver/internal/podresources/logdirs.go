package podresources

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Bounds on one scan of the log directories: a node runs a few hundred pods
// at most (the kubelet's maxPods default is 110), so these only stop a
// misconfigured path (a huge directory) from costing memory and time.
const (
	maxPodDirs      = 10_000
	maxContainerLog = 40_000
)

// ParsePodLogDir splits the name of a kubelet pod log directory,
// "<namespace>_<pod>_<uid>" (/var/log/pods). Namespace and pod names are DNS
// names and the uid a UUID or static pod hash, none holding '_', so the split
// is unambiguous; any other shape is rejected.
func ParsePodLogDir(name string) (namespace, pod, uid string, ok bool) {
	namespace, rest, ok1 := strings.Cut(name, "_")
	pod, uid, ok2 := strings.Cut(rest, "_")
	if !ok1 || !ok2 || !isName(namespace) || !isName(pod) || !isName(uid) {
		return "", "", "", false
	}
	return namespace, pod, uid, true
}

// ParseContainerLogName splits the name of a kubelet container log symlink,
// "<pod>_<namespace>_<container>-<container id>.log" (/var/log/containers).
// Container names may hold '-', the id (hex) never does, so the last '-'
// separates them.
func ParseContainerLogName(name string) (pod, namespace, container, containerID string, ok bool) {
	base, isLog := strings.CutSuffix(name, ".log")
	pod, rest, ok1 := strings.Cut(base, "_")
	namespace, last, ok2 := strings.Cut(rest, "_")
	i := strings.LastIndexByte(last, '-')
	if !isLog || !ok1 || !ok2 || i <= 0 || !isName(pod) || !isName(namespace) || !isName(last) {
		return "", "", "", "", false
	}
	container, containerID = last[:i], last[i+1:]
	if !isHexID(containerID) {
		return "", "", "", "", false
	}
	return pod, namespace, container, containerID, true
}

// isName accepts a non-empty name free of the separators the kubelet's
// file names rely on.
func isName(s string) bool {
	return s != "" && !strings.ContainsAny(s, "_/\x00")
}

// isHexID accepts a container id: lowercase hex, as every CRI runtime prints it.
func isHexID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

type containerRef struct{ ns, pod, container string }

// logIndex is one scan of the kubelet's log directories. Immutable once built.
type logIndex struct {
	podByUID   map[string]podKey
	uidByPod   map[podKey]string
	containers map[string]containerRef
	podsErr    error // reading pod_logs_dir
	contErr    error // reading its sibling "containers"
	truncated  bool
}

var emptyLogIndex = &logIndex{}

// scanLogDirs reads the pod directory names under podsDir and the container
// symlink names in its sibling "containers" directory. Names only: no link
// is followed and no file opened, so the scan costs two directory reads.
func scanLogDirs(podsDir string) *logIndex {
	x := &logIndex{podByUID: map[string]podKey{}, uidByPod: map[podKey]string{}, containers: map[string]containerRef{}}
	names, more, err := readNames(podsDir, maxPodDirs)
	x.podsErr, x.truncated = err, more
	for _, n := range names {
		if ns, pod, uid, ok := ParsePodLogDir(n); ok {
			x.podByUID[uid] = podKey{ns, pod}
			x.uidByPod[podKey{ns, pod}] = uid
		}
	}
	names, more, err = readNames(filepath.Join(filepath.Dir(filepath.Clean(podsDir)), "containers"), maxContainerLog)
	x.contErr, x.truncated = err, x.truncated || more
	for _, n := range names {
		if pod, ns, c, id, ok := ParseContainerLogName(n); ok {
			x.containers[id] = containerRef{ns, pod, c}
		}
	}
	return x
}

// readNames returns at most limit entry names of dir; more says it stopped early.
func readNames(dir string, limit int) (names []string, more bool, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, fmt.Errorf("open kubelet log directory %s: %w", dir, err)
	}
	defer f.Close()
	names, err = f.Readdirnames(limit + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("read kubelet log directory %s: %w", dir, err)
	}
	if len(names) > limit {
		return names[:limit], true, nil
	}
	return names, false, nil
}

package procfs

import (
	"io/fs"
	"path"
	"strings"
)

// deletedSuffix is what the kernel appends to the target of /proc/<pid>/exe when the
// executable has been unlinked since the process started (proc(5),
// https://man7.org/linux/man-pages/man5/proc_pid_exe.5.html).
const deletedSuffix = " (deleted)"

// exeBase is the base name of the target of <pid>/exe, or "" when the link cannot be read.
// Reading another user's link needs ptrace access (CAP_SYS_PTRACE), which the collector
// normally lacks, and kernel threads have none: both are the ordinary case, so a failure is
// not an error, the caller falls back to comm.
func exeBase(fsys fs.FS, dir string) string {
	target, err := fs.ReadLink(fsys, dir+"/exe")
	if err != nil {
		return ""
	}
	target = strings.TrimSuffix(target, deletedSuffix)
	base := path.Base(target)
	if base == "." || base == "/" {
		return ""
	}
	return base
}

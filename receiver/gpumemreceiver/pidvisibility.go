package gpumemreceiver

import (
	"errors"
	"io/fs"

	"go.uber.org/zap"
)

// pidMissesBeforeWarning is how many lookups of NVML's pids must fail with "no such file",
// without one success, before the proc root is judged not to show host pids. A process that
// exits between NVML's list and the /proc read misses once and is gone from the next list;
// a proc root of another pid namespace misses on every process at every scrape.
const pidMissesBeforeWarning = 5

// pidVisibility decides, once, whether processes.proc_root shows the pids NVML reports
// (host pids). A collector in a container sees its own pid namespace at /proc unless the
// host's is mounted; then every lookup fails and the metrics carry pids alone. That is
// said once in the log, with the fix, and scraping goes on.
type pidVisibility struct {
	procRoot string
	logger   *zap.Logger

	decided bool
	misses  int
}

// observe takes the result of one lookup of an NVML pid.
func (v *pidVisibility) observe(err error) {
	if v.decided {
		return
	}
	switch {
	case err == nil:
		v.decided = true
	case errors.Is(err, fs.ErrNotExist):
		v.misses++
		if v.misses < pidMissesBeforeWarning {
			return
		}
		v.decided = true
		v.logger.Warn("processes.proc_root does not show the pids NVML reports, so per-process metrics carry pids alone "+
			"(no process name, container or pod); the collector likely runs in its own pid namespace",
			zap.String("proc_root", v.procRoot),
			zap.Int("failed_lookups", v.misses),
			zap.String("fix", "mount the host's /proc into the collector's container (hostPath /proc at /host/proc, read-only) "+
				"and set processes.proc_root: /host/proc"),
			zap.Error(err))
	}
	// Other errors (permission, a malformed file) say nothing about the namespace.
}

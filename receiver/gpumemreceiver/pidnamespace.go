package gpumemreceiver

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/pidns"
)

// pidMissesBeforeWarning is how many lookups of NVML's pids must fail with "no such file",
// without one success, before the proc root is judged not to show NVML's pids. A process
// that exits between NVML's list and the /proc read misses once and is gone from the next
// list; a proc root of another pid namespace misses on every process at every scrape.
const pidMissesBeforeWarning = 5

// pidNamespace is what the collector's PID namespace costs it. A driver from 535.113.01
// reports every pid in the caller's namespace and leaves out the processes the caller
// cannot see (see internal/pidns); a collector outside the namespace that holds the
// node's workloads then gets no process of another pod from NVML. That is found at start,
// said once when the driver is known (WARN, and the component's recoverable error through
// the session's Degraded), and the scraper stops emitting what it would get wrong.
type pidNamespace struct {
	res      pidns.Result
	procRoot string
	logger   *zap.Logger

	warnOnce sync.Once

	// The lookup heuristic, for what detection cannot see (a driver that reports host
	// pids to a collector whose proc_root is not the host's); touched by the scraper only.
	decided bool
	misses  int
}

// hides says whether NVML of this driver lists only part of the node's processes.
func (p *pidNamespace) hides(driverVersion string) bool {
	return p.res.Verdict.Hides() && pidns.TranslatesPids(driverVersion)
}

// checked says whether there is a verdict to report as nvidia.gpu.process.hidden.
func (p *pidNamespace) checked() bool {
	return p.res.Verdict != pidns.NotChecked
}

// lookups says whether NVML's pids may be looked up in proc_root: not when they are the
// collector's namespace's numbers and proc_root is a namespace above it.
func (p *pidNamespace) lookups(driverVersion string) bool {
	return !(p.res.Verdict == pidns.Below && pidns.TranslatesPids(driverVersion))
}

// logStart says what detection found, once at start; a verdict that hides is warned about
// when the driver is known (degraded).
func (p *pidNamespace) logStart() {
	if !p.checked() {
		return
	}
	fields := []zap.Field{
		zap.String("verdict", p.res.Verdict.String()), zap.Uint64("pid_namespace", p.res.NS),
		zap.Int("depth_below_proc_root", p.res.Depth), zap.String("proc_root", p.procRoot),
		zap.Duration("took", p.res.Took),
	}
	switch p.res.Verdict {
	case pidns.HostLike:
		p.logger.Info("the collector is not in the initial PID namespace, but its namespace holds other namespaces' processes "+
			"(a node that is itself a container, as kind's); NVML lists the processes of that namespace and those below it",
			append(fields, zap.Int("nested_pid", p.res.NestedPID))...)
	case pidns.Unknown:
		p.logger.Info("could not tell whether the collector is in the host's PID namespace; NVML may list only the processes of the collector's own",
			append(fields, zap.Error(p.res.Err))...)
	default:
		p.logger.Debug("PID namespace detected", fields...)
	}
}

// degraded is the session's Degraded: nil unless the namespace hides processes from this
// driver; then the one warning, and the error the component status carries.
func (p *pidNamespace) degraded(driverVersion string) error {
	if !p.hides(driverVersion) {
		return nil
	}
	err := fmt.Errorf("NVML lists only the GPU processes of the collector's own PID namespace (%s, driver %s): run the collector in the host's PID namespace (hostPID: true)",
		p.res.Verdict, driverVersion)
	p.warnOnce.Do(func() {
		p.logger.Warn("the collector is not in the host's PID namespace and this NVIDIA driver reports only the processes it can see: "+
			"per-process GPU memory, process and pod names, allocation reconciliation and OOM matching by pid or pod miss every process outside it; "+
			"nvidia.gpu.memory.unattributed is not emitted and nvidia.gpu.process.hidden is 1",
			zap.String("verdict", p.res.Verdict.String()), zap.Uint64("pid_namespace", p.res.NS),
			zap.Int("depth_below_proc_root", p.res.Depth), zap.String("proc_root", p.procRoot),
			zap.String("driver_version", driverVersion),
			zap.String("fix", "set hostPID: true on the collector's pod (and processes.proc_root to the host's /proc, which hostPID makes /proc), or run the collector on the host"),
			zap.Error(err))
	})
	return err
}

// observe takes the result of one lookup of an NVML pid.
func (p *pidNamespace) observe(err error) {
	if p.decided {
		return
	}
	switch {
	case err == nil:
		p.decided = true
	case errors.Is(err, fs.ErrNotExist):
		p.misses++
		if p.misses < pidMissesBeforeWarning {
			return
		}
		p.decided = true
		p.logger.Warn("processes.proc_root does not show the pids NVML reports, so per-process metrics carry pids alone "+
			"(no process name, container or pod)",
			zap.String("proc_root", p.procRoot),
			zap.Int("failed_lookups", p.misses),
			zap.String("fix", "run the collector in the host's PID namespace (hostPID: true) with processes.proc_root: /proc, "+
				"or mount the host's /proc (hostPath /proc at /host/proc, read-only) and set processes.proc_root: /host/proc"),
			zap.Error(err))
	}
	// Other errors (permission, a malformed file) say nothing about the namespace.
}

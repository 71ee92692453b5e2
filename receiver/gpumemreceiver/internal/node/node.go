package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/kmsg"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/pidns"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"
)

// The backends (Config.Kind): the driver's NVML library, or a scenario replay.
const (
	NVML      = "nvml"
	Simulated = "simulated"
)

// DefaultKmsgPath is the host's kernel log, where Xid lines are read by default.
const DefaultKmsgPath = "/dev/kmsg"

// Config is what the receiver's configuration says about the backend.
type Config struct {
	Kind        string // NVML or Simulated
	LibraryPath string // the NVML library to load; "" is the loader's default
	ProcRoot    string // where the host's /proc is visible
	KmsgPath    string // the kernel log to read Xid lines from; "" for none
	Scenario    string // simulated: the scenario file; "" runs the built-in scenario
	LogDir      string // simulated: where the scenario's application log lines go; "" for none

	// The kubelet's PodResources socket and pod log directory; "" for none. A simulated
	// node serves its scenario's pods itself when these are the defaults (simkubelet.go).
	PodResourcesSocket, PodLogsDir string
}

// Node is what differs between a real and a simulated GPU node.
type Node struct {
	Lib      nvml.Interface
	ProcFS   fs.FS
	KmsgPath string    // the kernel log to read Xid lines from; "" for none
	Boot     time.Time // what kernel log timestamps count from
	Stop     func()    // releases what the backend holds (the simulator's writers); may be nil
	// Verify says whether Lib may be called into, before each Init (the Session's Verify);
	// nil when it always may (the simulator, a test's mock).
	Verify func() error

	// PodResourcesSocket and PodLogsDir are where the node's kubelet is read; "" for none.
	PodResourcesSocket, PodLogsDir string
	// PIDNamespace is where the collector runs relative to proc_root and the node's
	// workloads; NotChecked for the simulator and tests' backends.
	PIDNamespace pidns.Result
}

// New builds the backend cfg names. The simulated one is started: its clock runs.
func New(cfg Config) (Node, error) {
	if cfg.Kind == Simulated {
		return simulated(cfg)
	}
	var opts []nvml.LibraryOption
	if cfg.LibraryPath != "" {
		opts = append(opts, nvml.WithLibraryPath(cfg.LibraryPath))
	}
	// The name go-nvml opens: library_path, else its default for the loader to find.
	name := cfg.LibraryName()
	return Node{
		Lib: nvml.New(opts...), ProcFS: os.DirFS(cfg.ProcRoot), KmsgPath: cfg.KmsgPath, Boot: bootTime(),
		PodResourcesSocket: cfg.PodResourcesSocket, PodLogsDir: cfg.PodLogsDir,
		Verify:       func() error { return nvmlx.CheckLibrary(name) },
		PIDNamespace: pidns.Detect(cfg.ProcRoot, "/proc"),
	}, nil
}

// bootTime is when the kernel log's clock started; without /proc/uptime, now (records then
// carry the time they were read).
func bootTime() time.Time {
	if t, err := kmsg.BootTime(); err == nil {
		return t
	}
	return time.Now()
}

func simulated(cfg Config) (Node, error) {
	scn := simnvml.BuiltinScenario()
	if cfg.Scenario != "" {
		var err error
		if scn, err = simnvml.LoadScenario(cfg.Scenario); err != nil {
			return Node{}, fmt.Errorf("'simulated.scenario': %w", err)
		}
	}
	// The simulator writes its kernel records where the receiver reads them: never the host's
	// /dev/kmsg (the default), but a file of its own unless the user named one. The same goes
	// for the kubelet's socket and pod log directory (simkubelet.go).
	b := Node{Boot: bootTime(), KmsgPath: cfg.KmsgPath}
	var own ownedDir
	defer own.removeUnlessKept()
	if b.KmsgPath == DefaultKmsgPath {
		dir, err := own.get()
		if err != nil {
			return Node{}, fmt.Errorf("start simulated backend: %w", err)
		}
		b.KmsgPath = filepath.Join(dir, "kmsg")
	}
	if b.KmsgPath != "" {
		// The reader opens the file at start; the simulator appends to it.
		if err := touch(b.KmsgPath); err != nil {
			return Node{}, fmt.Errorf("start simulated backend: %w", err)
		}
	}
	kubelet, err := simulatedKubelet(cfg, scn, &own)
	if err != nil {
		return Node{}, fmt.Errorf("start simulated backend: %w", err)
	}
	b.PodResourcesSocket, b.PodLogsDir = kubelet.socket, kubelet.podLogs
	sim, err := simnvml.New(scn, simnvml.Options{Now: time.Now, BootTime: b.Boot, KmsgPath: b.KmsgPath, LogDir: cfg.LogDir, PodLogsDir: kubelet.podLogs})
	if err == nil {
		err = sim.Start()
	}
	if err != nil {
		kubelet.stop()
		return Node{}, fmt.Errorf("start simulated backend: %w", err)
	}
	b.Lib, b.ProcFS = sim, sim.ProcFS()
	cleanup := own.keep()
	b.Stop = func() {
		sim.Stop()
		kubelet.stop()
		cleanup()
	}
	return b, nil
}

// touch creates path when it does not exist. Non-blocking, so a FIFO there (which the
// receiver's own kernel log reader is about to open) never blocks Start: with no reader yet
// open(2) fails with ENXIO instead of waiting, and the FIFO is left as it is.
func touch(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ENXIO) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// LibraryName names the library the backend loads, for the log lines.
func (cfg Config) LibraryName() string {
	switch {
	case cfg.Kind == Simulated:
		return "simulated"
	case cfg.LibraryPath != "":
		return cfg.LibraryPath
	default:
		return "libnvidia-ml.so.1"
	}
}

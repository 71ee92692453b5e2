package gpumemreceiver

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
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/simnvml"
)

// backend is what differs between a real and a simulated GPU node.
type backend struct {
	lib      nvml.Interface
	procFS   fs.FS
	kmsgPath string    // the kernel log to read Xid lines from; "" for none
	boot     time.Time // what kernel log timestamps count from
	stop     func()    // releases what the backend holds (the simulator's writers); may be nil
}

func defaultBackend(cfg *Config) (backend, error) {
	if cfg.Backend == backendSimulated {
		return simulatedBackend(cfg)
	}
	var opts []nvml.LibraryOption
	if cfg.LibraryPath != "" {
		opts = append(opts, nvml.WithLibraryPath(cfg.LibraryPath))
	}
	return backend{lib: nvml.New(opts...), procFS: os.DirFS(cfg.Processes.ProcRoot), kmsgPath: cfg.Xid.KmsgPath, boot: bootTime()}, nil
}

// bootTime is when the kernel log's clock started; without /proc/uptime, now (records then
// carry the time they were read).
func bootTime() time.Time {
	if t, err := kmsg.BootTime(); err == nil {
		return t
	}
	return time.Now()
}

func simulatedBackend(cfg *Config) (backend, error) {
	scn := simnvml.BuiltinScenario()
	if cfg.Simulated.Scenario != "" {
		var err error
		if scn, err = simnvml.LoadScenario(cfg.Simulated.Scenario); err != nil {
			return backend{}, fmt.Errorf("'simulated.scenario': %w", err)
		}
	}
	// The simulator writes its kernel records where the receiver reads them: never the host's
	// /dev/kmsg (the default), but a file of its own unless the user named one.
	b := backend{boot: bootTime(), kmsgPath: cfg.Xid.KmsgPath}
	var cleanup func()
	if b.kmsgPath == defaultKmsgPath {
		dir, err := os.MkdirTemp("", "gpumem-sim-")
		if err != nil {
			return backend{}, fmt.Errorf("start simulated backend: %w", err)
		}
		b.kmsgPath = filepath.Join(dir, "kmsg")
		cleanup = func() { _ = os.RemoveAll(dir) }
	}
	if b.kmsgPath != "" {
		// The reader opens the file at start; the simulator appends to it.
		if err := touch(b.kmsgPath); err != nil {
			return backend{}, fmt.Errorf("start simulated backend: %w", err)
		}
	}
	sim, err := simnvml.New(scn, simnvml.Options{Now: time.Now, BootTime: b.boot, KmsgPath: b.kmsgPath, LogDir: cfg.Simulated.LogDir})
	if err == nil {
		err = sim.Start()
	}
	if err != nil {
		if cleanup != nil {
			cleanup()
		}
		return backend{}, fmt.Errorf("start simulated backend: %w", err)
	}
	b.lib, b.procFS = sim, sim.ProcFS()
	b.stop = func() {
		sim.Stop()
		if cleanup != nil {
			cleanup()
		}
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

func (r *gpuMemReceiver) libraryPath() string {
	switch {
	case r.cfg.Backend == backendSimulated:
		return "simulated"
	case r.cfg.LibraryPath != "":
		return r.cfg.LibraryPath
	default:
		return "libnvidia-ml.so.1"
	}
}

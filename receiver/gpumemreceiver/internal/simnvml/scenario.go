package simnvml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"
)

// Scenario is what the simulator replays. testdata/scenarios/README.md
// documents every key; LoadScenario reads one from YAML and BuiltinScenario
// returns the demo's.
type Scenario struct {
	// Duration is the loop length: scenario time is elapsed time modulo
	// Duration. 0 plays the scenario once; every series then holds its last value.
	Duration time.Duration `yaml:"duration,omitempty"`
	// DriverVersion and NVMLVersion are what the system queries answer.
	DriverVersion string `yaml:"driver_version,omitempty"`
	NVMLVersion   string `yaml:"nvml_version,omitempty"`
	// KmsgFile receives a kernel record line per Xid event; a relative path
	// resolves against Dir. Options.KmsgPath overrides it.
	KmsgFile string    `yaml:"kmsg_file,omitempty"`
	GPUs     []GPU     `yaml:"gpus"`
	Events   []Event   `yaml:"events,omitempty"`
	LogLines []LogLine `yaml:"log_lines,omitempty"`
	// Pods are the node's Kubernetes pods and the GPUs the kubelet allocated to them.
	Pods []Pod `yaml:"pods,omitempty"`

	// Dir is the directory of the scenario file, set by LoadScenario.
	Dir string `yaml:"-"`
}

// GPU is one simulated device.
type GPU struct {
	// Index is the NVML index; omitted, the GPU's position in the list.
	Index *int `yaml:"index,omitempty"`
	// Minor is the device node's minor number (/dev/nvidia<minor>); omitted, the index.
	// The kernel numbers GPUs in probe order and NVML by PCI bus id, so on real nodes the
	// two can differ.
	Minor  *int   `yaml:"minor,omitempty"`
	UUID   string `yaml:"uuid,omitempty"`
	Name   string `yaml:"name,omitempty"`
	Serial string `yaml:"serial,omitempty"`
	// VBIOS is the version GetVbiosVersion answers.
	VBIOS string `yaml:"vbios,omitempty"`
	BusID string `yaml:"bus_id,omitempty"`
	// MemoryTotal is the framebuffer NVML reports as total.
	MemoryTotal Bytes `yaml:"memory_total,omitempty"`
	// Reserved is what the driver and firmware keep (memory info v2).
	Reserved *Bytes `yaml:"reserved,omitempty"`
	// Utilization and MemoryUtilization are percents (0-100).
	Utilization       Series `yaml:"utilization,omitempty"`
	MemoryUtilization Series `yaml:"memory_utilization,omitempty"`
	// Unattributed is memory in use that no listed process accounts for.
	Unattributed Series `yaml:"unattributed,omitempty"`
	ECCMode      *bool  `yaml:"ecc_mode,omitempty"`
	// PersistenceMode is on by default (nvidia-persistenced runs on most servers).
	PersistenceMode *bool `yaml:"persistence_mode,omitempty"`
	// ComputeMode is default, exclusive_process or prohibited; "" is default.
	ComputeMode  string       `yaml:"compute_mode,omitempty"`
	RetiredPages RetiredPages `yaml:"retired_pages,omitempty"`
	RemappedRows RemappedRows `yaml:"remapped_rows,omitempty"`
	ECCErrors    ECCErrors    `yaml:"ecc_errors,omitempty"`
	// Supports switches NVML features off: a false key makes its calls
	// answer ERROR_NOT_SUPPORTED. Keys: see supportKeys.
	Supports map[string]bool `yaml:"supports,omitempty"`
	// Processes are the GPU's processes while it is not in MIG mode.
	Processes []Process `yaml:"processes,omitempty"`
	// MIG splits the GPU into MIG instances (A100, H100 and later); see MIG.
	MIG *MIG `yaml:"mig,omitempty"`
	// Garbage are windows of impossible memory readings and process lists; see Garbage.
	Garbage []Garbage `yaml:"garbage,omitempty"`
	// Replaced gives the index another UUID from a time on; see Replacement.
	Replaced *Replacement `yaml:"replaced,omitempty"`
}

// RetiredPages are page counts per retirement cause and the pending flag.
type RetiredPages struct {
	SingleBitECC Series `yaml:"single_bit_ecc,omitempty"`
	DoubleBitECC Series `yaml:"double_bit_ecc,omitempty"`
	Pending      Series `yaml:"pending,omitempty"`
}

// RemappedRows are row-remapping counts and flags.
type RemappedRows struct {
	Correctable   Series `yaml:"correctable,omitempty"`
	Uncorrectable Series `yaml:"uncorrectable,omitempty"`
	Pending       Series `yaml:"pending,omitempty"`
	Failed        Series `yaml:"failed,omitempty"`
}

// ECCErrors are volatile ECC error counts. They are counters: each loop adds
// the series' end value, so they never go down while the scenario loops.
type ECCErrors struct {
	Corrected   Series `yaml:"corrected,omitempty"`
	Uncorrected Series `yaml:"uncorrected,omitempty"`
}

// Process is one process holding a context on a GPU.
type Process struct {
	PID  uint32 `yaml:"pid"`
	Name string `yaml:"name"`
	// Exe is the target of /proc/<pid>/exe; omitted, /usr/bin/<name>; "-" makes the link
	// unreadable (another user's process without CAP_SYS_PTRACE), leaving comm.
	Exe string `yaml:"exe,omitempty"`
	// Type is compute (default), graphics, or both.
	Type string `yaml:"type,omitempty"`
	// Cgroup is the literal /proc/<pid>/cgroup content. Without it, one is
	// made from ContainerID and PodUID (a host session when both are empty).
	Cgroup      string `yaml:"cgroup,omitempty"`
	ContainerID string `yaml:"container_id,omitempty"`
	PodUID      string `yaml:"pod_uid,omitempty"`
	// VPID is the pid inside the container's pid namespace; 0 means none.
	VPID   int    `yaml:"vpid,omitempty"`
	Memory Series `yaml:"memory"`
	// SMUtilization and MemoryUtilization are the process's percents (0-100) of
	// the GPU's SM and memory-controller time (nvidia-smi pmon's sm and mem). A
	// process at 0 for both has no utilization sample, as NVML lists only busy ones.
	SMUtilization     Series `yaml:"sm_utilization,omitempty"`
	MemoryUtilization Series `yaml:"memory_utilization,omitempty"`
	// Start and Stop bound the process's life in scenario time; Stop 0 means
	// it never exits.
	Start time.Duration `yaml:"start,omitempty"`
	Stop  time.Duration `yaml:"stop,omitempty"`
}

// Event is an Xid the driver reports at scenario time At.
type Event struct {
	At      time.Duration `yaml:"at"`
	GPU     int           `yaml:"gpu"`
	Xid     uint64        `yaml:"xid"`
	PID     uint32        `yaml:"pid,omitempty"`
	Name    string        `yaml:"name,omitempty"`
	Message string        `yaml:"message,omitempty"`
	// Via is both (default), nvml (event set only) or kmsg (kernel log only).
	Via string `yaml:"via,omitempty"`
}

// LogLine is text an application appends to a log file at scenario time At.
type LogLine struct {
	At time.Duration `yaml:"at"`
	// Path is relative to Options.LogDir.
	Path string `yaml:"path"`
	Line string `yaml:"line"`
	// Format wraps the line as a container runtime writes it, stamped with the time it is
	// written: cri (containerd, CRI-O: "<RFC 3339> stderr F <line>") or docker (json-file:
	// {"log":…,"stream":"stderr","time":…}); "" writes the line as it is.
	Format string `yaml:"format,omitempty"`
}

// Log line formats.
const (
	LogFormatCRI    = "cri"
	LogFormatDocker = "docker"
)

// maxScenarioBytes bounds what LoadScenario reads: scenarios are hand-written.
const maxScenarioBytes = 16 << 20

// LoadScenario reads, defaults and validates the scenario file at path.
func LoadScenario(path string) (*Scenario, error) {
	// Non-blocking and regular files only: a FIFO would block the collector's start
	// until something wrote to it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("load scenario %s: %w", path, err)
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("load scenario %s: not a regular file (%s)", path, info.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxScenarioBytes+1))
	if err != nil {
		return nil, fmt.Errorf("load scenario %s: %w", path, err)
	}
	if len(data) > maxScenarioBytes {
		return nil, fmt.Errorf("load scenario %s: larger than %d bytes", path, maxScenarioBytes)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("load scenario %s: %w", path, err)
	}
	s, err := ParseScenario(data, dir)
	if err != nil {
		return nil, fmt.Errorf("load scenario %s: %w", path, err)
	}
	return s, nil
}

// ParseScenario parses scenario YAML; dir is what relative paths in it
// resolve against. The result has defaults filled in and is validated.
func ParseScenario(data []byte, dir string) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty scenario: 'gpus' is required")
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document: a scenario is one document")
	}
	s.Dir = dir
	if err := s.Normalize(); err != nil {
		return nil, err
	}
	return &s, nil
}

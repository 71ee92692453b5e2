package simnvml

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// Options configure a Sim. The zero value runs on the wall clock and writes
// no files.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Start is scenario time zero; zero means Now() when New runs.
	Start time.Time
	// BootTime is what kmsg record timestamps (µs since boot) count from;
	// zero means Start, so a record's timestamp is its time since Start.
	BootTime time.Time
	// KmsgPath is where Xid kernel records are appended; it overrides the
	// scenario's kmsg_file. Empty with no kmsg_file: no kmsg records.
	KmsgPath string
	// LogDir is the directory log_lines paths are relative to; empty
	// disables log lines.
	LogDir string
	// PodLogsDir, when set, gets the kubelet's pod log layout for the scenario's pods
	// (<ns>_<pod>_<uid>/<container>/) and its sibling "containers" directory the kubelet's
	// <pod>_<ns>_<container>-<id>.log links, so pod names resolve as on a node.
	PodLogsDir string
	// FlushInterval is how often Start's goroutine writes due records;
	// zero means 100ms.
	FlushInterval time.Duration
	// InitReturn, when not SUCCESS, is what Init answers, to exercise a
	// failed NVML start.
	InitReturn nvml.Return
	// OnError receives file write errors from Start's goroutine; nil drops them.
	OnError func(error)
}

// Sim is a simulated NVML: an nvml.Interface whose answers follow a scenario
// along the clock. It is safe for concurrent use.
type Sim struct {
	// Interface answers ERROR_NOT_SUPPORTED for every NVML call Sim does not
	// implement itself.
	*mock.Interface

	scn     *Scenario
	now     func() time.Time
	start   time.Time
	boot    time.Time
	devices []*device
	procs   *procFS
	initRet nvml.Return
	inits   atomic.Int32

	// nvmlEvents are the scenario's events delivered through event sets.
	nvmlEvents []Event

	writerMu sync.Mutex
	writer   *fileWriter
	opts     Options
}

var _ nvml.Interface = (*Sim)(nil)

// New builds a simulator for s, which it normalizes (see Scenario.Normalize);
// s must not change afterwards.
func New(s *Scenario, opts Options) (*Sim, error) {
	if s == nil {
		return nil, errors.New("new simulator: nil scenario")
	}
	if err := s.Normalize(); err != nil {
		return nil, fmt.Errorf("new simulator: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Start.IsZero() {
		opts.Start = opts.Now()
	}
	if opts.BootTime.IsZero() {
		opts.BootTime = opts.Start
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 100 * time.Millisecond
	}
	if opts.KmsgPath == "" {
		opts.KmsgPath = s.KmsgFile
	}
	sim := &Sim{
		Interface: &mock.Interface{},
		scn:       s,
		now:       opts.Now,
		start:     opts.Start,
		boot:      opts.BootTime,
		initRet:   opts.InitReturn,
		opts:      opts,
	}
	fillNotSupported(sim.Interface)
	for i := range s.GPUs {
		d, err := newDevice(sim, &s.GPUs[i])
		if err != nil {
			return nil, fmt.Errorf("new simulator: gpus[%d]: %w", i, err)
		}
		sim.devices = append(sim.devices, d)
	}
	for _, e := range s.Events {
		if e.Via != ViaKmsg {
			sim.nvmlEvents = append(sim.nvmlEvents, e)
		}
	}
	sim.procs = newProcFS(sim)
	return sim, nil
}

// Scenario returns the normalized scenario the simulator plays.
func (s *Sim) Scenario() *Scenario { return s.scn }

// ProcFS returns the simulated proc tree: <pid>/comm, <pid>/cgroup and
// <pid>/status for every scenario process alive at the moment of each call.
// Hold it once; it follows the clock.
func (s *Sim) ProcFS() fs.FS { return s.procs }

// elapsed is the time since Start, never negative.
func (s *Sim) elapsed() time.Duration {
	return max(s.now().Sub(s.start), 0)
}

// scenarioTime maps elapsed time to scenario time and the loop number.
func (s *Sim) scenarioTime(el time.Duration) (time.Duration, int64) {
	if d := s.scn.Duration; d > 0 {
		return el % d, int64(el / d)
	}
	return el, 0
}

// ScenarioTime is the current scenario time.
func (s *Sim) ScenarioTime() time.Duration {
	t, _ := s.scenarioTime(s.elapsed())
	return t
}

// up reports whether Init has succeeded more often than Shutdown.
func (s *Sim) up() bool { return s.inits.Load() > 0 }

// Init implements nvml.Interface: it counts, as NVML does.
func (s *Sim) Init() nvml.Return {
	if s.initRet != nvml.SUCCESS {
		return s.initRet
	}
	s.inits.Add(1)
	return nvml.SUCCESS
}

// Shutdown implements nvml.Interface.
func (s *Sim) Shutdown() nvml.Return {
	for {
		n := s.inits.Load()
		if n <= 0 {
			return nvml.ERROR_UNINITIALIZED
		}
		if s.inits.CompareAndSwap(n, n-1) {
			return nvml.SUCCESS
		}
	}
}

// ErrorString implements nvml.Interface with go-nvml's library-free texts.
func (s *Sim) ErrorString(r nvml.Return) string { return r.Error() }

// SystemGetDriverVersion implements nvml.Interface.
func (s *Sim) SystemGetDriverVersion() (string, nvml.Return) {
	if !s.up() {
		return "", nvml.ERROR_UNINITIALIZED
	}
	return s.scn.DriverVersion, nvml.SUCCESS
}

// SystemGetNVMLVersion implements nvml.Interface.
func (s *Sim) SystemGetNVMLVersion() (string, nvml.Return) {
	if !s.up() {
		return "", nvml.ERROR_UNINITIALIZED
	}
	return s.scn.NVMLVersion, nvml.SUCCESS
}

// DeviceGetCount implements nvml.Interface.
func (s *Sim) DeviceGetCount() (int, nvml.Return) {
	if !s.up() {
		return 0, nvml.ERROR_UNINITIALIZED
	}
	return len(s.devices), nvml.SUCCESS
}

// DeviceGetHandleByIndex implements nvml.Interface.
func (s *Sim) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	if !s.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	if i < 0 || i >= len(s.devices) {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return s.devices[i], nvml.SUCCESS
}

// DeviceGetHandleByUUID implements nvml.Interface.
func (s *Sim) DeviceGetHandleByUUID(uuid string) (nvml.Device, nvml.Return) {
	if !s.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	for _, d := range s.devices {
		if d.gpu.UUID == uuid {
			return d, nvml.SUCCESS
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

// DeviceGetHandleByPciBusId implements nvml.Interface.
func (s *Sim) DeviceGetHandleByPciBusId(busID string) (nvml.Device, nvml.Return) {
	if !s.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	a, err := parseBusID(busID)
	if err != nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	for _, d := range s.devices {
		if d.pci == a {
			return d, nvml.SUCCESS
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

// EventSetCreate implements nvml.Interface. The set sees events from the
// moment it is created on.
func (s *Sim) EventSetCreate() (nvml.EventSet, nvml.Return) {
	if !s.up() {
		return nil, nvml.ERROR_UNINITIALIZED
	}
	return newEventSet(s), nvml.SUCCESS
}

// EventSetWait implements nvml.Interface.
func (s *Sim) EventSetWait(set nvml.EventSet, timeoutMs uint32) (nvml.EventData, nvml.Return) {
	if set == nil {
		return nvml.EventData{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return set.Wait(timeoutMs)
}

// EventSetFree implements nvml.Interface.
func (s *Sim) EventSetFree(set nvml.EventSet) nvml.Return {
	if set == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return set.Free()
}

package nvmlx

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// ErrDown is what the gate answers while the library is not initialised.
var ErrDown = errors.New("NVML is not initialised")

// Session owns the NVML library for one receiver instance and is the one gate every NVML
// call passes: after a failed nvml.Init any other go-nvml call dereferences an unresolved
// symbol and kills the process, so nothing may reach the library while it is down.
type Session struct {
	lib         nvml.Interface
	libraryPath string // for the log line only
	logger      *zap.Logger

	// RetryMin and RetryMax bound the background re-initialisation after a failed start;
	// set them before Start.
	RetryMin, RetryMax time.Duration
	// Verify, when set, runs before every Init; while it fails the library is not called
	// into at all (a library that is not NVML: see libcheck.go). Set it before Start.
	Verify func() error
	// Degraded, when set, runs after every successful Init with the driver version; an
	// error it returns is reported as the component's recoverable error in place of
	// StatusOK, so that a condition the receiver found (a PID namespace that hides
	// processes) is not cleared by NVML coming up. Set it before Start.
	Degraded func(driverVersion string) error

	// rediscoverEvery is how often the device list is read again (a lost GPU back after a
	// reset, a GPU added by a driver reload); lastDiscover is when it last was.
	rediscoverEvery time.Duration
	lastDiscover    time.Time

	mu            sync.RWMutex
	up            bool
	driverVersion string
	devices       []*Device
	syms          *driverSymbols
	// generation counts successful inits: a handle (an event set) made under one is not
	// used under another. report is Start's, for the status reports of a release.
	generation atomic.Uint64
	report     Report

	stop chan struct{}
	wg   sync.WaitGroup
}

// Report receives the session's health for the component's status: a non-nil err is a
// recoverable error, nil is OK. A nil Report drops them.
type Report func(err error)

func (r Report) send(err error) {
	if r != nil {
		r(err)
	}
}

// NewSession prepares a session on lib; nothing touches the library before Start.
// libraryPath names the library in the log lines.
func NewSession(lib nvml.Interface, libraryPath string, logger *zap.Logger) *Session {
	return &Session{
		lib:         lib,
		libraryPath: libraryPath,
		logger:      logger,
		RetryMin:    time.Second,
		RetryMax:    time.Minute,
		// A GPU comes back after a reset or a driver reload, which take tens of seconds:
		// reading the list more often would only cost calls.
		rediscoverEvery: 30 * time.Second,
		stop:            make(chan struct{}),
	}
}

// Start initialises NVML. A failure is not fatal: the collector keeps running, the component
// reports a recoverable error, and one goroutine retries with backoff until it works.
func (s *Session) Start(report Report) {
	s.mu.Lock()
	s.report = report
	s.mu.Unlock()
	err := s.init()
	if err == nil {
		if derr := s.degraded(); derr != nil {
			report.send(derr)
		}
		return
	}
	var notNVML *NotNVMLError
	if errors.As(err, &notNVML) {
		s.logger.Error("the library loaded for NVML is not the NVIDIA driver's NVML library and is never called into; GPU metrics start once it is, retrying in the background",
			zap.String("library", s.libraryPath), zap.Strings("missing_symbols", notNVML.Missing),
			zap.String("check", "library_path names the NVIDIA driver's libnvidia-ml.so.1 (ldconfig -p | grep libnvidia-ml) or is empty, and no CUDA toolkit stubs directory is on LD_LIBRARY_PATH"),
			zap.Error(err))
	} else {
		s.logger.Warn("NVML could not be initialised; GPU metrics start once it can be, retrying in the background",
			zap.String("library", s.libraryPath),
			zap.String("check", "the NVIDIA driver is installed, libnvidia-ml.so.1 is on the loader path, and /dev/nvidia* are visible to the collector"),
			zap.Error(err))
	}
	report.send(err)
	s.wg.Add(1)
	go s.retry(report)
}

func (s *Session) retry(report Report) {
	defer s.wg.Done()
	wait := s.RetryMin
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
		if err := s.init(); err != nil {
			s.logger.Debug("NVML still unavailable", zap.Error(err), zap.Duration("next_try", wait))
			wait = min(2*wait, s.RetryMax)
			continue
		}
		s.logger.Info("NVML initialised after retry")
		if derr := s.degraded(); derr != nil {
			report.send(derr)
			return
		}
		report.send(nil)
		return
	}
}

// degraded asks Degraded about the driver now initialised.
func (s *Session) degraded() error {
	if s.Degraded == nil {
		return nil
	}
	s.mu.RLock()
	driver := s.driverVersion
	s.mu.RUnlock()
	return s.Degraded(driver)
}

// init loads the library and discovers the devices. Only here is the library touched
// while the gate is closed, and only through Init, and only once Verify passed.
func (s *Session) init() error {
	if s.Verify != nil {
		if err := s.Verify(); err != nil {
			return err
		}
	}
	if r := s.lib.Init(); r != nvml.SUCCESS {
		return fmt.Errorf("initialise NVML from %q: %w", s.libraryPath, r)
	}
	syms := probeSymbols(s.lib)
	devices, driver, err := discover(s.lib, &syms, s.logger)
	if err != nil {
		_ = s.lib.Shutdown()
		return err
	}
	s.mu.Lock()
	s.up, s.devices, s.driverVersion, s.syms = true, devices, driver, &syms
	s.generation.Add(1)
	s.mu.Unlock()
	s.logger.Info("NVML initialised", zap.String("driver_version", driver), zap.Int("gpus", len(devices)))
	if missing := syms.missingList(); len(missing) > 0 {
		s.logger.Info("the NVIDIA driver's NVML library lacks calls of newer driver branches; the metrics they feed are not emitted",
			zap.String("driver_version", driver), zap.Strings("missing_symbols", missing))
	}
	return nil
}

// WithDevices runs fn with the device list while holding the gate open; ErrDown while
// the library is not initialised.
func (s *Session) WithDevices(fn func(driverVersion string, devices []*Device)) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.up {
		return ErrDown
	}
	fn(s.driverVersion, s.devices)
	return nil
}

// Shutdown stops the retry loop and releases the library. Safe without Start and twice.
func (s *Session) Shutdown() {
	s.mu.Lock() // Release starts a retry loop under mu only while stop is open
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up {
		s.up = false
		if r := s.lib.Shutdown(); r != nvml.SUCCESS {
			s.logger.Warn("NVML shutdown failed", zap.Error(r))
		}
	}
}

// IsUp says whether the gate is open.
func (s *Session) IsUp() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.up
}

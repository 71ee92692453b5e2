package nvmlx

import (
	"errors"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// DriverGone says whether err is NVML's word that the kernel driver under the loaded library
// is gone: not loaded (unloaded for an upgrade, or the driver container stopped), or a
// different version than the library (nvml.h: NVML_ERROR_LIB_RM_VERSION_MISMATCH, "RM
// detects a driver/library version mismatch", what a library loaded before an in-place
// upgrade answers afterwards). Neither clears while the library stays loaded.
func DriverGone(err error) bool {
	var r nvml.Return
	return errors.As(err, &r) && (r == nvml.ERROR_DRIVER_NOT_LOADED || r == nvml.ERROR_LIB_RM_VERSION_MISMATCH)
}

// Release shuts NVML down because the driver went away, so the collector holds neither the
// driver's device files nor the old library (go-nvml closes it on the Shutdown that matches
// the last Init), then retries Init in the background as after a failed start: a new
// driver's library is loaded afresh. One WARN, the component's recoverable error, and the
// usual INFO when NVML is back. Safe from any goroutine but inside WithDevices; a release
// while down, or after Shutdown, does nothing.
func (s *Session) Release(cause error) {
	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		return
	default:
	}
	if !s.up {
		s.mu.Unlock()
		return
	}
	s.up, s.devices = false, nil
	r := s.lib.Shutdown()
	report := s.report
	s.wg.Add(1)
	s.mu.Unlock()
	s.logger.Warn("the NVIDIA driver went away (unloaded, or replaced by another version): NVML shut down so the collector holds nothing of it; GPU metrics resume once a driver answers, retrying in the background",
		zap.String("library", s.libraryPath), zap.NamedError("cause", cause), zap.NamedError("shutdown", returnErr(r)))
	report.send(cause)
	go s.retry(report)
}

// Generation counts successful inits; a handle made under one generation (an event set)
// must not be used under another. It takes no lock, so it may be read inside WithDevices.
func (s *Session) Generation() uint64 { return s.generation.Load() }

func returnErr(r nvml.Return) error {
	if r == nvml.SUCCESS {
		return nil
	}
	return r
}

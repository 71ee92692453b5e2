package nvmlx

import (
	"errors"
	"slices"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// XidFallenOffTheBus is Xid 79, "GPU has fallen off the bus": the GPU is lost.
const XidFallenOffTheBus = 79

// lostAction is what the lost-GPU warning tells the operator to do. NVIDIA's Xid catalog
// gives RESTART_BM (restart the machine) as the immediate action for Xid 79.
const lostAction = "drain the GPU's workloads and reboot the node (NVIDIA's action for Xid 79 is RESTART_BM); " +
	"a GPU reset (nvidia-smi -r -i <index>) may do where the GPU is still on the bus; " +
	"if it recurs, check the GPU's power, cooling and PCIe seating"

// IsLost says whether err is NVML's GPU_IS_LOST.
func IsLost(err error) bool {
	var r nvml.Return
	return errors.As(err, &r) && r == nvml.ERROR_GPU_IS_LOST
}

// MarkLost marks the device's GPU (a MIG instance's parent) lost and warns once; the
// scraper then stops calling it until a re-enumeration finds it answering. Safe from any
// goroutine.
func (d *Device) MarkLost(reason string, logger *zap.Logger) {
	d = d.root()
	if !d.lost.CompareAndSwap(false, true) {
		return
	}
	logger.Warn("GPU lost: NVML can no longer reach it; it is reported as hw.status failed and not queried until it answers again",
		zap.String("gpu", d.UUID), zap.String("pci_bus_id", d.BusID), zap.Int("index", d.Index),
		zap.String("reason", reason), zap.String("action", lostAction))
}

// Lost says whether the device is marked lost. Safe from any goroutine.
func (d *Device) Lost() bool { return d.lost.Load() }

// MaybeRediscover reads the device list again once rediscoverEvery has passed since the
// last read: a lost GPU that answers again is picked up with one INFO line (its calls
// probed afresh), a GPU not seen before is added. Called by the scraper before a scrape.
func (s *Session) MaybeRediscover(now time.Time) {
	if s.rediscoverEvery <= 0 || !s.IsUp() {
		return
	}
	if s.lastDiscover.IsZero() {
		s.lastDiscover = now
		return
	}
	if now.Sub(s.lastDiscover) < s.rediscoverEvery {
		return
	}
	s.lastDiscover = now
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		return
	}
	count, r := s.lib.DeviceGetCount()
	if r != nvml.SUCCESS {
		s.logger.Debug("re-enumerating GPUs failed", zap.Error(r))
		return
	}
	for i := 0; i < count; i++ {
		found, err := openDevice(s.lib, s.syms, i)
		if err != nil {
			continue // a lost GPU stays as it was; its warning was given
		}
		known := s.byUUID(found.UUID)
		switch {
		case known == nil:
			if old := s.atIndex(i); old != nil {
				// The index answers with another UUID: a reset that changed it, or a swapped
				// board. The GPU that was there is gone; keeping it would report two GPUs in
				// one slot, the old one reading the new one's memory.
				s.retire(old)
				s.logger.Warn("GPU replaced: the index answers with another UUID; the old GPU's series end",
					zap.Int("index", i), zap.String("gpu", found.UUID), zap.String("old_gpu", old.UUID),
					zap.String("pci_bus_id", found.BusID), zap.String("old_pci_bus_id", old.BusID))
			} else {
				s.logger.Info("GPU found", zap.String("gpu", found.UUID), zap.String("pci_bus_id", found.BusID), zap.Int("index", i))
			}
			s.devices = append(s.devices, found)
		case known.lost.Load():
			if !answers(found) {
				continue
			}
			// Handles may be reissued after a reset or a driver reload; the UUID is the GPU.
			known.Handle, known.Index, known.BusID, known.Minor = found.Handle, found.Index, found.BusID, found.Minor
			known.resetProbes()
			known.mig.mode, known.mig.enabled, known.mig.untilCheck = known.syms.initial(migSymbols...), false, 0
			known.mig.setInstances(nil)
			known.lost.Store(false)
			s.logger.Info("GPU is back: querying it again", zap.String("gpu", known.UUID), zap.String("pci_bus_id", known.BusID), zap.Int("index", i))
		}
	}
}

// answers says whether a GPU's handle works: its memory can be read.
func answers(d *Device) bool {
	_, r := d.Handle.GetMemoryInfo()
	return r == nvml.SUCCESS
}

// byUUID is the known GPU with the UUID, or nil; the caller holds mu.
func (s *Session) byUUID(uuid string) *Device {
	for _, d := range s.devices {
		if d.UUID == uuid {
			return d
		}
	}
	return nil
}

// atIndex is the known GPU at NVML index i, or nil; the caller holds mu.
func (s *Session) atIndex(i int) *Device {
	for _, d := range s.devices {
		if d.Index == i {
			return d
		}
	}
	return nil
}

// retire forgets a GPU that is no longer there; the caller holds mu. Its series end with
// it: nothing is reported under its UUID again.
func (s *Session) retire(old *Device) {
	s.devices = slices.DeleteFunc(s.devices, func(d *Device) bool { return d == old })
}

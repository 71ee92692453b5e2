package gpumemreceiver

import (
	"errors"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
)

// xidFallenOffTheBus is Xid 79, "GPU has fallen off the bus": the GPU is lost.
const xidFallenOffTheBus = 79

// lostAction is what the lost-GPU warning tells the operator to do. NVIDIA's Xid catalog
// gives RESTART_BM (restart the machine) as the immediate action for Xid 79.
const lostAction = "drain the GPU's workloads and reboot the node (NVIDIA's action for Xid 79 is RESTART_BM); " +
	"a GPU reset (nvidia-smi -r -i <index>) may do where the GPU is still on the bus; " +
	"if it recurs, check the GPU's power, cooling and PCIe seating"

// isLost says whether err is NVML's GPU_IS_LOST.
func isLost(err error) bool {
	var r nvml.Return
	return errors.As(err, &r) && r == nvml.ERROR_GPU_IS_LOST
}

// markLost marks a GPU lost and warns once; the scraper then stops calling it until a
// re-enumeration finds it answering. Safe from any goroutine.
func markLost(d *device, reason string, logger *zap.Logger) {
	d = d.root()
	if !d.lost.CompareAndSwap(false, true) {
		return
	}
	logger.Warn("GPU lost: NVML can no longer reach it; it is reported as hw.status failed and not queried until it answers again",
		zap.String("gpu", d.uuid), zap.String("pci_bus_id", d.busID), zap.Int("index", d.index),
		zap.String("reason", reason), zap.String("action", lostAction))
}

// maybeRediscover reads the device list again once rediscoverEvery has passed since the
// last read: a lost GPU that answers again is picked up with one INFO line (its calls
// probed afresh), a GPU not seen before is added. Called by the scraper before a scrape.
func (s *session) maybeRediscover(now time.Time) {
	if s.rediscoverEvery <= 0 || !s.isUp() {
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
		known := s.byUUID(found.uuid)
		switch {
		case known == nil:
			s.devices = append(s.devices, found)
			s.logger.Info("GPU found", zap.String("gpu", found.uuid), zap.String("pci_bus_id", found.busID), zap.Int("index", i))
		case known.lost.Load():
			if !answers(found) {
				continue
			}
			// Handles may be reissued after a reset or a driver reload; the UUID is the GPU.
			known.handle, known.index, known.busID = found.handle, found.index, found.busID
			known.resetProbes()
			known.mig.mode, known.mig.enabled, known.mig.untilCheck = known.syms.initial(migSymbols...), false, 0
			known.mig.setInstances(nil)
			known.lost.Store(false)
			s.logger.Info("GPU is back: querying it again", zap.String("gpu", known.uuid), zap.String("pci_bus_id", known.busID), zap.Int("index", i))
		}
	}
}

// answers says whether a GPU's handle works: its memory can be read.
func answers(d *device) bool {
	_, r := d.handle.GetMemoryInfo()
	return r == nvml.SUCCESS
}

// byUUID is the known GPU with the UUID, or nil; the caller holds mu.
func (s *session) byUUID(uuid string) *device {
	for _, d := range s.devices {
		if d.uuid == uuid {
			return d
		}
	}
	return nil
}

// hwStates are semconv's hw.state values for hw.status, in the order they are recorded.
var hwStates = [...]string{metadata.AttrHwStateOk, metadata.AttrHwStateDegraded, metadata.AttrHwStateFailed}

// recordStatus records hw.status of a GPU: one point per state, 1 for the current one
// (semconv's hw.status is an UpDownCounter of that shape). Failed for a lost GPU, degraded
// while a page retirement or a row remapping waits for a reset, ok otherwise.
func (s *metricsScraper) recordStatus(d *device, ts pcommon.Timestamp) {
	if !s.mb.Enabled(metadata.HwStatus) {
		return
	}
	current := metadata.AttrHwStateOk
	switch {
	case d.lost.Load():
		current = metadata.AttrHwStateFailed
	case d.retirementPending || d.remapPending:
		current = metadata.AttrHwStateDegraded
	}
	for _, state := range hwStates {
		if dp, ok := s.mb.RecordInt(metadata.HwStatus, ts, boolInt(state == current)); ok {
			attrs := dp.Attributes()
			attrs.EnsureCapacity(2)
			attrs.PutStr(metadata.AttrHwType, metadata.AttrHwTypeGpu)
			attrs.PutStr(metadata.AttrHwState, state)
		}
	}
}

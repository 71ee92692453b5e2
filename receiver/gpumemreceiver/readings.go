package gpumemreceiver

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// rejectReason is one kind of impossible NVML reading, in the order of
// metadata.AttrNvidiaGpuReadingReason's enum.
type rejectReason int

const (
	rejectMemoryMismatch rejectReason = iota
	rejectMemoryImpossible
	rejectProcessPIDZero
	rejectProcessOverLimit
	rejectProcessDuplicate
	rejectReasons

	// rejectNone: the reading is as NVML gave it.
	rejectNone rejectReason = -1
)

var rejectReasonNames = [rejectReasons]string{
	rejectMemoryMismatch:   metadata.AttrNvidiaGpuReadingReasonMemoryMismatch,
	rejectMemoryImpossible: metadata.AttrNvidiaGpuReadingReasonMemoryImpossible,
	rejectProcessPIDZero:   metadata.AttrNvidiaGpuReadingReasonProcessPIDZero,
	rejectProcessOverLimit: metadata.AttrNvidiaGpuReadingReasonProcessOverLimit,
	rejectProcessDuplicate: metadata.AttrNvidiaGpuReadingReasonProcessDuplicate,
}

var rejectReasonText = [rejectReasons]string{
	rejectMemoryMismatch:   "NVML's used, free and reserved memory do not add up to the total: used is taken as total - reserved - free",
	rejectMemoryImpossible: "NVML's memory reading cannot be right (no total, or neither free nor used fits in it): the GPU's memory metrics are left out while it lasts",
	rejectProcessPIDZero:   "NVML lists a process with pid 0: it is left out",
	rejectProcessOverLimit: "NVML lists a process holding more memory than the GPU has: it is left out",
	rejectProcessDuplicate: "NVML lists a process twice with the same kind of context: it is counted once",
}

// rejectWarnEvery is the least time between two warnings of one kind on one device: a
// glitch that comes and goes is counted each time (nvidia.gpu.readings.rejected) but warned
// of at most this often.
const rejectWarnEvery = 10 * time.Minute

// memoryTolerance is the mismatch of used + free + reserved against total that is left as
// NVML gives it: rounding in a driver's accounting, not an impossible reading.
const memoryTolerance = 1 << 20

// readingGuard counts the readings the scraper rejected, per device and reason, and warns
// once when a kind of rejection begins on a device. Owned by the scraper's goroutine.
type readingGuard struct {
	logger  *zap.Logger
	devices map[string]*guardedDevice // by hw.id
}

type guardedDevice struct {
	counts [rejectReasons]int64
	// now: reasons seen in this scrape; before: in the previous one.
	now, before [rejectReasons]bool
	warned      [rejectReasons]int64 // Unix ns of the last warning; 0 never
	streak      [rejectReasons]int   // consecutive scrapes before this one with the reason
	detail      [rejectReasons][]zap.Field
	// total is the device's last believable memory total: the limit of its processes in a
	// scrape whose memory reading was dropped.
	total int64
}

func newReadingGuard(logger *zap.Logger) *readingGuard {
	return &readingGuard{logger: logger, devices: map[string]*guardedDevice{}}
}

// device is d's state, made on first use.
func (g *readingGuard) device(d *nvmlx.Device) *guardedDevice {
	gd := g.devices[d.UUID]
	if gd == nil {
		gd = &guardedDevice{}
		g.devices[d.UUID] = gd
	}
	return gd
}

// limit is the memory a process on d can hold at most: this scrape's total when it was
// believable (ok), else the last believable one; 0 when none is known.
func (g *readingGuard) limit(d *nvmlx.Device, mem memoryReading, ok bool) int64 {
	gd := g.device(d)
	if ok {
		gd.total = mem.total
	}
	return gd.total
}

// reject counts one rejected reading of d; detail goes on the warning, if this is the
// scrape that gives one.
func (g *readingGuard) reject(d *nvmlx.Device, why rejectReason, detail ...zap.Field) {
	gd := g.device(d)
	gd.counts[why]++
	if !gd.now[why] {
		gd.now[why] = true
		gd.detail[why] = detail
	}
}

// settle ends d's scrape: a kind of rejection that was not there in the previous scrape
// warns (at most once per rejectWarnEvery), and d's counts are recorded on its resource
// (the current one). A reason's series starts with its first rejection.
func (g *readingGuard) settle(mb *metadata.MetricsBuilder, d *nvmlx.Device, ts pcommon.Timestamp) {
	gd := g.devices[d.UUID]
	if gd == nil {
		return
	}
	now := int64(ts)
	for why := range rejectReasons {
		if gd.now[why] && !gd.before[why] && (gd.warned[why] == 0 || now-gd.warned[why] >= int64(rejectWarnEvery)) {
			fields := append([]zap.Field{
				zap.String("gpu", d.UUID), zap.Int("index", d.Index),
				zap.String("reason", rejectReasonNames[why]), zap.Int64("rejected_so_far", gd.counts[why]),
			}, gd.detail[why]...)
			g.logger.Warn(rejectReasonText[why], fields...)
			gd.warned[why] = now
		}
		if gd.now[why] {
			gd.streak[why]++
		} else {
			gd.streak[why] = 0
		}
		gd.before[why], gd.now[why], gd.detail[why] = gd.now[why], false, nil
		if gd.counts[why] == 0 {
			continue
		}
		if dp, ok := mb.RecordInt(metadata.NvidiaGpuReadingsRejected, ts, gd.counts[why]); ok {
			dp.Attributes().PutStr(metadata.AttrNvidiaGpuReadingReason, rejectReasonNames[why])
		}
	}
}

// lasting says whether d's rejection of this kind, seen in this scrape, has now been seen
// in forecastReadings scrapes in a row: no longer a glitch.
func (g *readingGuard) lasting(d *nvmlx.Device, why rejectReason) bool {
	gd := g.devices[d.UUID]
	return gd != nil && gd.streak[why]+1 >= forecastReadings
}

// checkMemory applies the accounting rule to one reading (documentation.md, "Impossible
// readings"). Total is the anchor: without it nothing is a fraction of anything. When used,
// free and reserved do not add up to it, free is believed (it is what the next allocation is
// checked against, and what memory info v1 derives used from) and used is recomputed; when
// free cannot be right either, used is believed if it fits. Otherwise the reading is dropped.
func checkMemory(m memoryReading) (memoryReading, rejectReason, bool) {
	if m.total <= 0 || m.reserved < 0 || m.reserved > m.total {
		return m, rejectMemoryImpossible, false
	}
	room := m.total - m.reserved
	if m.used >= 0 && m.free >= 0 && m.used <= room && m.free <= room {
		if diff := m.used + m.free - room; diff >= -memoryTolerance && diff <= memoryTolerance {
			return m, rejectNone, true
		}
	}
	switch {
	case m.free >= 0 && m.free <= room:
		m.used = room - m.free
	case m.used >= 0 && m.used <= room:
		m.free = room - m.used
	default:
		return m, rejectMemoryImpossible, false
	}
	m.repaired = true
	return m, rejectMemoryMismatch, true
}

// checkProcesses drops, in place, the processes no GPU can have: pid 0, more memory than
// the device's total (limit; 0 when unknown), and a pid listed twice with the same kind of
// context (the first listing is kept). Each is counted on d.
func (g *readingGuard) checkProcesses(d *nvmlx.Device, procs []gpuProcess, limit int64) []gpuProcess {
	kept := procs[:0]
	for _, p := range procs {
		switch {
		case p.pid == 0:
			g.reject(d, rejectProcessPIDZero, zap.Int64("bytes", p.bytes))
			continue
		case limit > 0 && p.bytes > limit:
			g.reject(d, rejectProcessOverLimit, zap.Uint32("pid", p.pid), zap.Int64("bytes", p.bytes), zap.Int64("limit", limit))
			continue
		case listed(kept, p):
			g.reject(d, rejectProcessDuplicate, zap.Uint32("pid", p.pid), zap.String("type", p.typ))
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// listed says whether procs already has p's pid with p's kind of context. Lists are dozens
// long at most, so a scan costs less than a map.
func listed(procs []gpuProcess, p gpuProcess) bool {
	for _, q := range procs {
		if q.pid == p.pid && q.typ == p.typ {
			return true
		}
	}
	return false
}

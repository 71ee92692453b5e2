package gpumemreceiver

import (
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/gpumem/otelcol-gpumem/internal/ramp"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/metadata"
	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/nvmlx"
)

// maxRunwayProcesses bounds the per-process histories of one device; processes beyond it
// get no growth metric (MPS or many small workers reach dozens, not hundreds).
const maxRunwayProcesses = 256

// runwayTracker keeps a bounded history of each device's usage and each of its processes'
// memory, fits the shared steady-ramp (package ramp) to them after every scrape, and turns a
// runway below warn_below into one predicted-OOM record per episode. Owned by the scraper,
// which calls it from one goroutine at a time.
type runwayTracker struct {
	crit      ramp.Criteria
	warnBelow time.Duration
	window    time.Duration
	maxPoints int

	switches *metadata.ResourceSwitches
	version  string
	// emit sends the records of one scrape on; called after the scrape, outside the gate.
	emit func(plog.Logs)

	devices map[string]*runwayDevice // by hw.id
	pending plog.Logs                // records of the current scrape; zero value when none
	growths []processGrowth          // scratch
}

func newRunwayTracker(cfg RunwayConfig, interval time.Duration, switches *metadata.ResourceSwitches, version string, emit func(plog.Logs)) *runwayTracker {
	crit := ramp.DefaultCriteria()
	crit.MinDuration = cfg.MinDuration
	points := maxRunwayPoints
	if interval > 0 {
		points = min(points, int(cfg.Window/interval)+2)
	}
	// A fit needs MinPoints samples: fewer in the window (a slow interval) would never fit.
	crit.MinPoints = min(crit.MinPoints, max(3, int(cfg.MinDuration/max(interval, time.Millisecond))/2))
	return &runwayTracker{
		crit: crit, warnBelow: cfg.WarnBelow, window: cfg.Window, maxPoints: points,
		switches: switches, version: version, emit: emit, devices: map[string]*runwayDevice{},
	}
}

// runwayDevice is one GPU's or MIG instance's history and episode state.
type runwayDevice struct {
	used  history
	procs map[procKey]*history
	seen  int64 // Unix ns of its last observation

	episode  bool  // a predicted-OOM record was sent and the runway has not recovered since
	clearing bool  // in an episode, the runway has been absent or above warn_below since clearAt
	clearAt  int64 // Unix ns

	// Out of an episode: the runway has been below warn_below in the last belowReadings
	// scrapes, since belowSince (Unix ns).
	belowReadings int
	belowSince    int64
}

// procKey is one nvidia.gpu.process.memory.usage stream: a pid with both kinds of context
// has two.
type procKey struct {
	pid      int64
	graphics bool
}

// processGrowth is a process found growing steadily in this scrape: its usage point (for the
// attributes) and its rate.
type processGrowth struct {
	dp    pmetric.NumberDataPoint
	slope float64
}

// observeRunway adds this scrape's readings of d to its history and records the runway and
// the growth of each steadily growing process on d's resource (the current one).
func (s *metricsScraper) observeRunway(d *nvmlx.Device, driver string, ts pcommon.Timestamp, mem memoryReading, memOK bool) {
	t := s.runway
	if t == nil || !memOK || mem.total <= 0 {
		return
	}
	if mem.repaired && !s.guard.lasting(d, rejectMemoryMismatch) {
		// A glitch, so far: kept out of the history, where it would read as a step. A
		// mismatch that lasts is the driver's own accounting, repaired the same way each time.
		return
	}
	if d.Parent == nil && d.MIGEnabled() {
		// A GPU in MIG mode is filled by nobody: a process allocates inside its instance,
		// whose own runway says when that fills. The GPU's aggregate (readable by privileged
		// callers) would repeat an instance's warning with a time that means nothing.
		delete(t.devices, d.UUID)
		return
	}
	now := int64(ts)
	rd := t.devices[d.UUID]
	if rd == nil {
		rd = &runwayDevice{procs: map[procKey]*history{}}
		t.devices[d.UUID] = rd
	}
	rd.seen = now
	oldest := now - int64(t.window)
	total := float64(mem.total)
	rd.used.push(ramp.Point{T: now, V: float64(mem.used)}, t.maxPoints, oldest)

	t.growths = t.observeProcesses(s.mb, rd, now, oldest, total, t.growths[:0])
	var top *processGrowth
	for i := range t.growths {
		g := &t.growths[i]
		if dp, ok := s.mb.RecordDouble(metadata.NvidiaGpuProcessMemoryGrowth, ts, g.slope); ok {
			g.dp.Attributes().CopyTo(dp.Attributes())
		}
		if top == nil || g.slope > top.slope {
			top = g
		}
	}

	fit, ok := t.fit(&rd.used, now, total)
	runway := 0.0
	if ok {
		runway = float64(max(mem.free, 0)) / fit.Slope
		s.mb.RecordDouble(metadata.NvidiaGpuMemoryRunway, ts, runway)
	}
	if t.episodeStep(rd, ok && runway < t.warnBelow.Seconds(), now) {
		t.warn(d, driver, ts, fit, runway, mem, top)
	}
}

// observeProcesses pushes each process's memory (this resource's usage points) into its
// history, forgets processes that are gone, and appends those growing steadily to out.
func (t *runwayTracker) observeProcesses(mb *metadata.MetricsBuilder, rd *runwayDevice, now, oldest int64, total float64, out []processGrowth) []processGrowth {
	dps, ok := mb.Points(metadata.NvidiaGpuProcessMemoryUsage)
	if !ok {
		clear(rd.procs)
		return out
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		pid, ok := dp.Attributes().Get(metadata.AttrProcessPID)
		if !ok {
			continue
		}
		key := procKey{pid: pid.Int(), graphics: strAttr(dp.Attributes(), metadata.AttrNvidiaGpuProcessType) == metadata.AttrNvidiaGpuProcessTypeGraphics}
		h := rd.procs[key]
		if h == nil {
			if len(rd.procs) >= maxRunwayProcesses {
				continue
			}
			h = &history{}
			rd.procs[key] = h
		}
		h.push(ramp.Point{T: now, V: float64(dp.IntValue())}, t.maxPoints, oldest)
		if fit, ok := t.fit(h, now, total); ok {
			out = append(out, processGrowth{dp: dp, slope: fit.Slope})
		}
	}
	// A process not listed now has exited: a later process with its pid is another one.
	for k, h := range rd.procs {
		if h.last() != now {
			delete(rd.procs, k)
		}
	}
	return out
}

// fit is the shared steady-ramp test on h. A series that has not grown over the last
// min_duration cannot hold a steady ramp of that length, so it costs a lookup, not a fit:
// most processes and GPUs are flat most of the time.
func (t *runwayTracker) fit(h *history, now int64, total float64) (ramp.Fit, bool) {
	pts := h.points()
	if len(pts) < t.crit.MinPoints {
		return ramp.Fit{}, false
	}
	from := now - int64(t.crit.MinDuration)
	if pts[0].T > from {
		return ramp.Fit{}, false // a history shorter than min_duration
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].T >= from })
	if pts[len(pts)-1].V <= pts[i].V {
		return ramp.Fit{}, false // no growth lately
	}
	fit, ok := t.crit.Ramp(pts, time.Time{}, total)
	if ok || i <= 1 {
		return fit, ok
	}
	// A leak that paused and resumed: the flat stretch in the window fails the span test
	// until it leaves the window, up to a window after the growth came back. The last
	// min_duration is judged alone, as a series that began then would be (from the point
	// before from, so that it lasts min_duration), when memory before it only paused.
	if recent, ok := t.crit.Ramp(pts[i-1:], time.Time{}, total); ok && pausedBefore(pts[:i], t.crit.Step(total)) {
		return recent, true
	}
	return fit, false
}

// pausedBefore says whether the history before the last min_duration (pts, ending at the
// point the recent part starts from) only paused: it never stood a step or more above where
// the recent part starts. Memory that was higher and came down was freed (a training loop
// whose steps free gradually): judging its every new rise alone would warn once a cycle,
// where the whole window fails and warns at most once.
func pausedBefore(pts []ramp.Point, step float64) bool {
	from := pts[len(pts)-1].V
	for _, p := range pts {
		if p.V >= from+step {
			return false
		}
	}
	return true
}

// forecastPersistence is how long, and forecastReadings in how many consecutive scrapes,
// the runway must stay below warn_below before the predicted-OOM record goes out: a reading
// that reverses within seconds (a driver's glitch, a transient allocation) is no forecast.
// A real leak crosses the threshold once and stays below, so this only delays its record.
const (
	forecastPersistence = 5 * time.Second
	forecastReadings    = 3
)

// episodeStep advances d's episode with this scrape's verdict and reports whether a new
// episode began: the runway has been below warn_below for forecastPersistence and
// forecastReadings scrapes. An episode ends once the runway has stayed absent or above
// warn_below for min_duration: the time a new ramp needs to be recognised anyway, so one
// leak that wobbles across the threshold, or whose fit fails for a scrape, is one episode.
func (t *runwayTracker) episodeStep(d *runwayDevice, below bool, now int64) bool {
	switch {
	case below && !d.episode:
		if d.belowReadings == 0 {
			d.belowSince = now
		}
		d.belowReadings++
		if d.belowReadings < forecastReadings || now-d.belowSince < int64(forecastPersistence) {
			return false
		}
		d.episode, d.clearing, d.belowReadings = true, false, 0
		return true
	case below:
		d.clearing = false
	case !d.episode:
		d.belowReadings = 0
	case !d.clearing:
		d.clearing, d.clearAt = true, now
	case now-d.clearAt >= int64(t.crit.MinDuration):
		d.episode, d.clearing = false, false
	}
	return false
}

// flush sends the records of this scrape and forgets devices unseen for a window (gone,
// or MIG instances destroyed).
func (t *runwayTracker) flush(now int64) {
	if t == nil {
		return
	}
	for id, d := range t.devices {
		if now-d.seen > int64(t.window) {
			delete(t.devices, id)
		}
	}
	if t.pending == (plog.Logs{}) {
		return
	}
	ld := t.pending
	t.pending = plog.Logs{}
	if t.emit != nil {
		t.emit(ld)
	}
}

// history is one series over the runway window: contiguous (the fit takes a slice), bounded
// by maxPoints and the window, compacted in place so that pushing is amortised O(1) and the
// array never exceeds twice the bound.
type history struct {
	arr   []ramp.Point
	start int
}

func (h *history) push(p ramp.Point, maxPoints int, oldest int64) {
	if n := len(h.arr); n > h.start && p.T <= h.arr[n-1].T {
		if p.T == h.arr[n-1].T {
			h.arr[n-1] = p // the same instant read twice: keep the newer reading
			return
		}
		h.arr, h.start = h.arr[:0], 0 // the clock went back: the old points are of no use
	}
	h.arr = append(h.arr, p)
	for h.start < len(h.arr) && (h.arr[h.start].T < oldest || len(h.arr)-h.start > maxPoints) {
		h.start++
	}
	if h.start > 0 && h.start >= len(h.arr)/2 {
		n := copy(h.arr, h.arr[h.start:])
		h.arr, h.start = h.arr[:n], 0
	}
}

func (h *history) points() []ramp.Point { return h.arr[h.start:] }

// last is the time of the newest point, 0 when empty.
func (h *history) last() int64 {
	if len(h.arr) == h.start {
		return 0
	}
	return h.arr[len(h.arr)-1].T
}

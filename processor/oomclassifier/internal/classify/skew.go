package classify

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The message's own figures are a clock. It states the failing process's bytes and the GPU's
// free memory at the failure, and both move as the GPU is used; when the window's figures at
// the record's timestamp contradict them, the window's state there is not the OOM's (a skewed
// log clock, most often), and the rules would judge the wrong moment. The processor compares
// the two (Compare), looks for the nearest moment within SkewSearch where they agree, and
// says what it did (SkewMoved, SkewUnresolved).

// Reading is what the window says at one moment of the figures an OOM message also states;
// -1 unknown (for ProcessBytes: the failing pid not listed then).
type Reading struct {
	ProcessBytes, Free int64
}

// Figures is a set of the figures a comparison used.
type Figures uint8

const (
	FigureProcess Figures = 1 << iota // the failing process's bytes
	FigureFree                        // the GPU's free memory
)

// Compare compares the message's figures with r on a GPU of total bytes: compared holds those
// both state, contradicted those farther apart than SkewMismatchFraction × total. Free is
// compared only when the message's total is the GPU's (within 1/16: CUDA's total is NVML's
// less a reserve): a message of another GPU says nothing of this one's free memory.
func Compare(oom *OOM, total int64, r Reading, th *Thresholds) (compared, contradicted Figures) {
	if total <= 0 {
		return 0, 0
	}
	margin := th.SkewMismatchFraction * float64(total)
	check := func(fig Figures, msg, win int64) {
		compared |= fig
		if math.Abs(float64(msg)-float64(win)) > margin {
			contradicted |= fig
		}
	}
	if oom.ProcessBytes > 0 && r.ProcessBytes >= 0 {
		check(FigureProcess, oom.ProcessBytes, r.ProcessBytes)
	}
	if oom.FreeBytes >= 0 && r.Free >= 0 && oom.TotalBytes > 0 && abs64(oom.TotalBytes-total) <= total/16 {
		check(FigureFree, oom.FreeBytes, r.Free)
	}
	return compared, contradicted
}

// SkewMoved says that the OOM was classified at, not at its record's timestamp stamp,
// because the message's figures contradict gpu's state at the stamp and agree with it there.
func SkewMoved(oom *OOM, gpu string, figs Figures, stamp Reading, stampAt, at time.Time) string {
	var b strings.Builder
	writeContradiction(&b, oom, gpu, figs, stamp, stampAt)
	d, dir := at.Sub(stampAt), "later"
	if d < 0 {
		d, dir = -d, "earlier"
	}
	b.WriteString(" and match it " + humanDuration(d) + " " + dir + ", at " + at.UTC().Format(time.RFC3339Nano) +
		", where the OOM was classified: the log's clock is taken as skewed by that much.")
	return b.String()
}

// SkewUnresolved says that the message's figures contradict gpu's state at the stamp and at
// every moment within search of it, so the classification at the stamp is doubted.
func SkewUnresolved(oom *OOM, gpu string, figs Figures, stamp Reading, stampAt time.Time, search time.Duration) string {
	var b strings.Builder
	writeContradiction(&b, oom, gpu, figs, stamp, stampAt)
	b.WriteString(" and at every moment the window holds within " + search.String() +
		" of it: the state classified may not be the OOM's, so the confidence was lowered.")
	return b.String()
}

func writeContradiction(b *strings.Builder, oom *OOM, gpu string, figs Figures, r Reading, at time.Time) {
	b.WriteString("The message's own figures (")
	writeFigures(b, figs, oom.PID, oom.ProcessBytes, oom.FreeBytes)
	b.WriteString(") contradict " + gpu + " at the record's timestamp, " + at.UTC().Format(time.RFC3339Nano) + " (")
	writeFigures(b, figs, oom.PID, r.ProcessBytes, r.Free)
	b.WriteString(")")
}

func writeFigures(b *strings.Builder, figs Figures, pid int, process, free int64) {
	if figs&FigureProcess != 0 {
		b.WriteString("pid " + strconv.Itoa(pid) + " holding " + humanBytes(process))
		if figs&FigureFree != 0 {
			b.WriteString(", ")
		}
	}
	if figs&FigureFree != 0 {
		b.WriteString(humanBytes(free) + " free")
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

package classify

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// humanBytes writes a byte count with one decimal in binary units ("14.2 GiB"); negative
// counts are the package's "unknown".
func humanBytes(b int64) string {
	if b < 0 {
		return "unknown"
	}
	return humanBytesF(float64(b))
}

// HumanBytes is humanBytes for the processor's own sentences (how the GPU was matched, the
// workload's peak), so that every figure in the evidence reads alike.
func HumanBytes(b int64) string { return humanBytes(b) }

// humanBytesF is humanBytes for rates and other fractional amounts.
func humanBytesF(b float64) string {
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return "unknown"
	}
	sign := ""
	if b < 0 {
		sign, b = "-", -b
	}
	units := [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for b >= 1024 && u < len(units)-1 {
		b /= 1024
		u++
	}
	if u == 0 {
		return sign + strconv.FormatFloat(b, 'f', 0, 64) + " B"
	}
	return sign + strconv.FormatFloat(b, 'f', 1, 64) + " " + units[u]
}

// shortID keeps enough of a UUID or container id to find it, and marks the cut.
func shortID(id string) string {
	const keep = 12
	if len(id) <= keep {
		return id
	}
	return id[:keep] + "…"
}

// gpuName names the GPU for a sentence: its UUID, else "the GPU".
func gpuName(g *GPUState) string {
	if g == nil || g.HWID == "" {
		return "the GPU"
	}
	return shortID(g.HWID)
}

// describeProcess names a process with its executable and container or pod, e.g.
// "pid 4242 (python, container 3f2a1b2c3d4e…)".
func describeProcess(p *Process) string {
	s := "pid " + strconv.Itoa(p.PID)
	extra := p.Name
	where := ""
	switch {
	case p.ContainerID != "":
		where = "container " + shortID(p.ContainerID)
	case p.PodUID != "":
		where = "pod " + shortID(p.PodUID)
	}
	if where != "" {
		if extra != "" {
			extra += ", "
		}
		extra += where
	}
	if extra != "" {
		s += " (" + extra + ")"
	}
	return s
}

// shortfallClause says how far the request was from fitting, when the numbers are known:
// "; the request of 2.0 GiB needed 1.1 GiB more than the 0.9 GiB free". It is empty
// otherwise, so a sentence stays whole either way.
func shortfallClause(f *facts) string {
	req := f.oom.RequestedBytes
	switch {
	case req < 0:
		return ""
	case f.free < 0:
		return "; the request was " + humanBytes(req)
	case req > f.free:
		return fmt.Sprintf("; the request of %s needed %s more than the %s free",
			humanBytes(req), humanBytes(req-f.free), humanBytes(f.free))
	default:
		return fmt.Sprintf("; the request of %s failed with %s reported free",
			humanBytes(req), humanBytes(f.free))
	}
}

// percent formats part/whole as "12.5%"; whole ≤ 0 gives "?%".
func percent(part, whole int64) string {
	if whole <= 0 {
		return "?%"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64) + "%"
}

// humanDuration rounds to whole seconds ("6m10s"), to tenths below ten seconds.
func humanDuration(d time.Duration) string {
	if d < 10*time.Second && d > -10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

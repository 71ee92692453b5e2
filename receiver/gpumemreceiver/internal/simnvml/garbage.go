package simnvml

import (
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Garbage is a window in which NVML answers a GPU's memory and process lists with readings
// no GPU can give, as a glitching driver or a board mid-reset does: the receiver has to
// reject them, not report them.
type Garbage struct {
	At  time.Duration `yaml:"at"`
	For time.Duration `yaml:"for"`
	// Total, Used, Free and Reserved replace what memory info v2 answers (and v1's total and
	// free; v1's used is total - free, wrapping as the unsigned numbers do); each omitted
	// keeps the consistent value.
	Total    *Bytes `yaml:"total,omitempty"`
	Used     *Bytes `yaml:"used,omitempty"`
	Free     *Bytes `yaml:"free,omitempty"`
	Reserved *Bytes `yaml:"reserved,omitempty"`
	// UsedBelowZero makes used read as a small negative number written unsigned
	// (2^64 - 1 GiB), as a subtraction in a driver that went below zero would.
	UsedBelowZero bool `yaml:"used_below_zero,omitempty"`
	// Processes, when set, replace both process lists: pid 0, duplicates and memory over
	// the total are the point, so nothing is checked.
	Processes []RawProcess `yaml:"processes,omitempty"`
}

// RawProcess is one entry of a garbage process list.
type RawProcess struct {
	PID    uint32 `yaml:"pid"`
	Memory Bytes  `yaml:"memory"`
	// Type is compute (default) or graphics.
	Type string `yaml:"type,omitempty"`
}

// Replacement makes the GPU at an index answer with another UUID from At on (a reset that
// changed it, a swapped board); it holds to the end of the loop.
type Replacement struct {
	At   time.Duration `yaml:"at"`
	UUID string        `yaml:"uuid"`
}

func (g *GPU) normalizeGarbage(path string, loop time.Duration, seen map[string]string) error {
	for i, w := range g.Garbage {
		p := fmt.Sprintf("%s.garbage[%d]", path, i)
		if w.For <= 0 {
			return fmt.Errorf("%s.for: %s, want a positive duration", p, w.For)
		}
		if loop > 0 && w.At >= loop {
			return fmt.Errorf("%s.at: %s is not within duration %s", p, w.At, loop)
		}
		for j, rp := range w.Processes {
			if rp.Type != "" && rp.Type != TypeCompute && rp.Type != TypeGraphics {
				return fmt.Errorf("%s.processes[%d].type: %q, want compute or graphics", p, j, rp.Type)
			}
		}
	}
	if r := g.Replaced; r != nil {
		if len(r.UUID) < 5 || r.UUID[:4] != "GPU-" || r.UUID == g.UUID {
			return fmt.Errorf("%s.replaced.uuid: %q must start with GPU- and differ from the GPU's", path, r.UUID)
		}
		if other, dup := seen["uuid:"+r.UUID]; dup {
			return fmt.Errorf("%s.replaced: uuid %s is also used by %s", path, r.UUID, other)
		}
		seen["uuid:"+r.UUID] = path + ".replaced"
	}
	return nil
}

// garbageAt is the garbage window of the GPU at scenario time t, or nil.
func (d *device) garbageAt(t time.Duration) *Garbage {
	for i := range d.gpu.Garbage {
		if w := &d.gpu.Garbage[i]; t >= w.At && t < w.At+w.For {
			return w
		}
	}
	return nil
}

// apply replaces the fields of a consistent v2 reading that the window sets.
func (w *Garbage) apply(m nvml.Memory_v2) nvml.Memory_v2 {
	set := func(dst *uint64, v *Bytes) {
		if v != nil {
			*dst = uint64(*v)
		}
	}
	set(&m.Total, w.Total)
	set(&m.Used, w.Used)
	set(&m.Free, w.Free)
	set(&m.Reserved, w.Reserved)
	if w.UsedBelowZero {
		m.Used = ^uint64(0) - 1<<30 + 1
	}
	return m
}

// garbageProcesses is the window's process list of the kinds other than exclude.
func (w *Garbage) garbageProcesses(exclude string) []nvml.ProcessInfo {
	var out []nvml.ProcessInfo
	for _, p := range w.Processes {
		typ := p.Type
		if typ == "" {
			typ = TypeCompute
		}
		if typ == exclude {
			continue
		}
		out = append(out, nvml.ProcessInfo{Pid: p.PID, UsedGpuMemory: uint64(p.Memory), GpuInstanceId: noInstance, ComputeInstanceId: noInstance})
	}
	return out
}

// uuid is the UUID the GPU answers at scenario time t.
func (d *device) uuid(t time.Duration) string {
	if r := d.gpu.Replaced; r != nil && t >= r.At {
		return r.UUID
	}
	return d.gpu.UUID
}

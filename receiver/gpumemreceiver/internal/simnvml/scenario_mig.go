package simnvml

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// MIG is a GPU's Multi-Instance GPU configuration: while Enabled is 1 the GPU is in MIG
// mode and its processes are those of its instances.
type MIG struct {
	// Enabled is the MIG mode over scenario time (a flag series: true/false or steps of
	// 1 and 0); omitted, MIG is on throughout. Switching it is a reconfiguration.
	Enabled   *Series       `yaml:"enabled,omitempty"`
	Instances []MIGInstance `yaml:"instances,omitempty"`
}

// MIGInstance is one MIG device: a compute instance in a GPU instance.
type MIGInstance struct {
	// Profile is the instance profile as NVML names it: 1g.10gb, 3g.40gb, 1c.3g.40gb.
	Profile string `yaml:"profile"`
	// UUID is the MIG device UUID; omitted, one derived from the GPU index and position.
	UUID string `yaml:"uuid,omitempty"`
	// GPUInstanceID defaults to the position in the list + 1; ComputeInstanceID to 0.
	GPUInstanceID     *int `yaml:"gpu_instance_id,omitempty"`
	ComputeInstanceID int  `yaml:"compute_instance_id,omitempty"`
	// ProfileID and PlacementStart are what nvmlGpuInstanceGetInfo answers for the GPU
	// instance (the profile id nvidia-smi mig -lgip lists, e.g. 19 for 1g.10gb on H100).
	// Omitted, the GPU instance queries answer NO_PERMISSION, as for an unprivileged caller.
	ProfileID      *int `yaml:"profile_id,omitempty"`
	PlacementStart *int `yaml:"placement_start,omitempty"`
	// MemoryTotal is the instance's framebuffer; omitted, 97.5% of the GiB the profile
	// names (an H100 80GB 1g.10gb has 9.75 GiB).
	MemoryTotal  Bytes     `yaml:"memory_total,omitempty"`
	Unattributed Series    `yaml:"unattributed,omitempty"`
	Processes    []Process `yaml:"processes,omitempty"`
	// Start and Stop bound the instance's life in scenario time (created, destroyed);
	// Stop 0 means it is never destroyed.
	Start time.Duration `yaml:"start,omitempty"`
	Stop  time.Duration `yaml:"stop,omitempty"`
}

// maxMIGInstances bounds a GPU's instance list; at most 7 live at once on real parts, but
// a reconfiguring scenario lists the instances of every layout it goes through.
const maxMIGInstances = 16

// migProfileRE matches NVML's profile names: [<n>c.]<n>g.<n>gb[+me|+gfx|-me…].
var migProfileRE = regexp.MustCompile(`^(?:[1-8]c\.)?([1-8])g\.([0-9]{1,4})gb(?:[+-][a-z]+)*$`)

func (m *MIG) normalize(path string, g *GPU, s *Scenario, seen map[string]string) error {
	if m.Enabled == nil {
		on := Const(1)
		m.Enabled = &on
	}
	if err := m.Enabled.check(path+".enabled", 1); err != nil {
		return err
	}
	if len(m.Instances) > maxMIGInstances {
		return fmt.Errorf("%s.instances: %d instances, at most %d are supported", path, len(m.Instances), maxMIGInstances)
	}
	room := g.MemoryTotal - *g.Reserved
	ids := map[[2]int]string{}
	for i := range m.Instances {
		inst := &m.Instances[i]
		ipath := fmt.Sprintf("%s.instances[%d]", path, i)
		if err := inst.normalize(ipath, *g.Index, i, room, s.Duration); err != nil {
			return err
		}
		if other, dup := seen["uuid:"+inst.UUID]; dup {
			return fmt.Errorf("%s.uuid: %s is also used by %s", ipath, inst.UUID, other)
		}
		seen["uuid:"+inst.UUID] = ipath
		id := [2]int{*inst.GPUInstanceID, inst.ComputeInstanceID}
		if other, dup := ids[id]; dup {
			return fmt.Errorf("%s: gpu_instance_id %d with compute_instance_id %d is also used by %s", ipath, id[0], id[1], other)
		}
		ids[id] = ipath
	}
	return nil
}

func (inst *MIGInstance) normalize(path string, gpu, pos int, room Bytes, loop time.Duration) error {
	match := migProfileRE.FindStringSubmatch(inst.Profile)
	if match == nil {
		return fmt.Errorf("%s.profile: %q is not a MIG profile such as 1g.10gb or 3g.40gb", path, inst.Profile)
	}
	if inst.UUID == "" {
		h := sha256.Sum256(fmt.Appendf(nil, "simnvml mig %d/%d", gpu, pos))
		inst.UUID = fmt.Sprintf("MIG-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
	}
	if len(inst.UUID) <= len("MIG-") || inst.UUID[:4] != "MIG-" || len(inst.UUID) > 80 {
		return fmt.Errorf("%s.uuid: %q must start with MIG- (at most 80 characters)", path, inst.UUID)
	}
	if inst.GPUInstanceID == nil {
		id := pos + 1
		inst.GPUInstanceID = &id
	}
	if *inst.GPUInstanceID < 0 || *inst.GPUInstanceID > 64 || inst.ComputeInstanceID < 0 || inst.ComputeInstanceID > 64 {
		return fmt.Errorf("%s: gpu_instance_id and compute_instance_id must be in 0..64", path)
	}
	if (inst.ProfileID == nil) != (inst.PlacementStart == nil) {
		return fmt.Errorf("%s: profile_id and placement_start are given together or not at all", path)
	}
	if inst.ProfileID != nil && (*inst.ProfileID < 0 || *inst.ProfileID > 64 || *inst.PlacementStart < 0 || *inst.PlacementStart > 64) {
		return fmt.Errorf("%s: profile_id and placement_start must be in 0..64", path)
	}
	if inst.MemoryTotal == 0 {
		gb, _ := strconv.Atoi(match[2])
		inst.MemoryTotal = Bytes(gb) * 975 * gib / 1000 / mib * mib
	}
	if inst.MemoryTotal > room {
		return fmt.Errorf("%s.memory_total: %s does not fit the GPU's %s", path, formatQuantity(float64(inst.MemoryTotal)), formatQuantity(float64(room)))
	}
	if inst.Start < 0 || inst.Stop < 0 {
		return fmt.Errorf("%s: start and stop must not be negative", path)
	}
	if inst.Stop != 0 && inst.Stop <= inst.Start {
		return fmt.Errorf("%s.stop: %s must be later than start %s", path, inst.Stop, inst.Start)
	}
	if loop > 0 && inst.Start >= loop {
		return fmt.Errorf("%s.start: %s is not within the scenario duration %s", path, inst.Start, loop)
	}
	if err := inst.Unattributed.check(path+".unattributed", float64(inst.MemoryTotal)); err != nil {
		return err
	}
	return normalizeProcesses(path, inst.Processes, loop, float64(inst.MemoryTotal))
}

// live reports whether the instance exists at scenario time t.
func (inst *MIGInstance) live(t time.Duration) bool {
	return t >= inst.Start && (inst.Stop == 0 || t < inst.Stop)
}

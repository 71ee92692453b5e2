package nvmlx

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// What NVML answers about MIG (NVML API reference, "Multi Instance GPU Management"):
//   - GetMigMode: Ampere and later parts that have MIG (A100, A30, H100, H200, B200, …);
//     everything else answers NOT_SUPPORTED, which switches the check off for that GPU.
//   - GetMaxMigDeviceCount: the MIG devices the GPU can hold (7 on A100/H100), 0 with MIG off.
//   - GetMigDeviceHandleByIndex: one MIG device (a compute instance inside a GPU instance)
//     per index below that count; NOT_FOUND where no instance sits at an index. Handles die
//     with their instance and may be reused for another; UUIDs (MIG-…) never are.
//   - On a MIG handle: GetUUID, GetName ("NVIDIA A100-SXM4-40GB MIG 1g.5gb": the profile is
//     the last word), GetGpuInstanceId, GetComputeInstanceId, GetMemoryInfo(_v2) of the
//     instance, and Get{Compute,Graphics}RunningProcesses of the processes in it. Those calls
//     need no privilege, unlike the parent's aggregate memory and process lists and the GPU
//     instance profile queries (GetGpuInstanceById), so the receiver uses the MIG handles.
//   - GetUtilizationRates answers NOT_SUPPORTED on MIG-enabled GPUs and MIG handles; ECC,
//     retired pages and row remapping stay on the parent.

// MIGRecheckEvery is how many scrapes pass between reads of a GPU's MIG mode and instance
// list: reconfiguring MIG (nvidia-smi mig, mig-parted) takes seconds and happens rarely, and
// a MIG handle that starts failing triggers a read at once.
const MIGRecheckEvery = 10

// migState is a GPU's MIG mode and, in MIG mode, its instances. Only the scraper touches it.
type migState struct {
	mode       Support // GetMigMode
	enabled    bool
	instances  []*Device
	untilCheck int // scrapes before the next read; 0 reads on the next scrape
	// shared is instances for the Xid source, which attributes a kernel line naming a MIG
	// instance ("GPU-I:05") from its own goroutine.
	shared atomic.Pointer[[]*Device]
}

func (m *migState) setInstances(instances []*Device) {
	m.instances = instances
	m.shared.Store(&instances)
}

// MIGEnabled says whether the GPU was in MIG mode when its MIG state was last read. Only the
// scraper asks.
func (d *Device) MIGEnabled() bool { return d.mig.enabled }

// MIGInstances are the GPU's MIG instances as last read; none outside MIG mode. Only the
// scraper asks.
func (d *Device) MIGInstances() []*Device { return d.mig.instances }

// InstanceByID is the GPU's MIG instance with the GPU instance id (and compute instance id,
// when ci >= 0), or nil when none is known. Safe from any goroutine.
func (d *Device) InstanceByID(gi, ci int) *Device {
	p := d.mig.shared.Load()
	if p == nil || gi < 0 {
		return nil
	}
	var match *Device
	for _, inst := range *p {
		if inst.GPUInstanceID != int64(gi) || (ci >= 0 && inst.ComputeInstanceID != int64(ci)) {
			continue
		}
		if match != nil && ci < 0 {
			return nil // several compute instances in the GPU instance: the line does not say which
		}
		match = inst
	}
	return match
}

// MIGDue says whether this scrape reads the GPU's MIG state (RefreshMIG), counting the
// scrape.
func (d *Device) MIGDue() bool { return d.mig.due() }

func (m *migState) due() bool {
	if m.untilCheck <= 0 {
		return true
	}
	m.untilCheck--
	return false
}

// RefreshMIG reads the GPU's MIG mode and, in MIG mode, its instances, keeping the devices
// of instances already known (and what was probed on them) by UUID.
func (d *Device) RefreshMIG(logger *zap.Logger) error {
	m := &d.mig
	m.untilCheck = MIGRecheckEvery - 1
	if m.mode == Unsupported {
		return nil
	}
	current, _, r := d.Handle.GetMigMode()
	ok, err := m.mode.Check(r)
	if err != nil {
		return fmt.Errorf("read MIG mode of GPU %s: %w", d.UUID, err)
	}
	enabled := ok && current == nvml.DEVICE_MIG_ENABLE
	if enabled != m.enabled {
		// What the GPU answers depends on the mode (utilization is NOT_SUPPORTED in MIG
		// mode, and row remapping while instances exist), so every call answered in the
		// other mode is probed again.
		d.resetProbes()
		m.enabled = enabled
		logger.Info("MIG mode of GPU changed", zap.String("gpu", d.UUID), zap.Bool("mig_enabled", enabled))
	}
	if !enabled {
		if len(m.instances) > 0 {
			m.setInstances(nil)
		}
		return nil
	}
	instances, err := d.listMIG()
	if changed(m.instances, instances) {
		names := make([]string, len(instances))
		for i, inst := range instances {
			names[i] = inst.Profile + " " + inst.UUID
		}
		logger.Info("MIG instances of GPU changed", zap.String("gpu", d.UUID), zap.Strings("instances", names))
	}
	m.setInstances(instances)
	return err
}

// listMIG enumerates the GPU's MIG devices. An index whose device cannot be read is left out
// and reported; the others are kept.
func (d *Device) listMIG() ([]*Device, error) {
	count, r := d.Handle.GetMaxMigDeviceCount()
	if r != nvml.SUCCESS {
		return d.mig.instances, fmt.Errorf("count MIG devices of GPU %s: %w", d.UUID, r)
	}
	var (
		out  []*Device
		errs []error
	)
	for i := 0; i < count; i++ {
		h, r := d.Handle.GetMigDeviceHandleByIndex(i)
		if r == nvml.ERROR_NOT_FOUND {
			continue // no instance at this index
		}
		if r != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("get MIG device %d of GPU %s: %w", i, d.UUID, r))
			continue
		}
		uuid, r := h.GetUUID()
		if r != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("read UUID of MIG device %d of GPU %s: %w", i, d.UUID, r))
			continue
		}
		if known := d.instance(uuid); known != nil {
			known.Handle = h // handles may be reissued; the UUID is the instance
			out = append(out, known)
			continue
		}
		inst, err := d.newInstance(h, uuid)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, inst)
	}
	return out, errors.Join(errs...)
}

// instance returns the known instance with the UUID, or nil.
func (d *Device) instance(uuid string) *Device {
	for _, inst := range d.mig.instances {
		if inst.UUID == uuid {
			return inst
		}
	}
	return nil
}

func (d *Device) newInstance(h nvml.Device, uuid string) (*Device, error) {
	gi, r := h.GetGpuInstanceId()
	if r != nvml.SUCCESS {
		return nil, fmt.Errorf("read GPU instance id of MIG device %s: %w", uuid, r)
	}
	ci, r := h.GetComputeInstanceId()
	if r != nvml.SUCCESS {
		return nil, fmt.Errorf("read compute instance id of MIG device %s: %w", uuid, r)
	}
	inst := &Device{
		Handle: h, Index: d.Index, UUID: uuid, Serial: d.Serial, BusID: d.BusID, Minor: d.Minor, syms: d.syms,
		Parent: d, GPUInstanceID: int64(gi), ComputeInstanceID: int64(ci), GIProfileID: -1, PlacementStart: -1,
	}
	inst.Name, _ = h.GetName()
	inst.Profile = migProfile(inst.Name)
	inst.GIProfileID, inst.PlacementStart = d.gpuInstancePlacement(gi)
	return inst, nil
}

// gpuInstancePlacement reads the profile id and placement start of the GPU's GPU instance
// gi, as NVIDIA's DRA driver does to name a MIG device (k8s-dra-driver-gpu
// cmd/gpu-kubelet-plugin/nvlib.go: GetGpuInstanceById, then GetInfo's ProfileId and
// Placement.Start); -1, -1 where the library lacks the calls or does not answer (nvml.h:
// "Requires privileged user").
func (d *Device) gpuInstancePlacement(gi int) (profileID, start int) {
	if !d.syms.has(symGpuInstanceByID, symGpuInstanceInfo) {
		return -1, -1
	}
	inst, r := d.Handle.GetGpuInstanceById(gi)
	if r != nvml.SUCCESS {
		return -1, -1
	}
	info, r := inst.GetInfo()
	if r != nvml.SUCCESS {
		return -1, -1
	}
	return int(info.ProfileId), int(info.Placement.Start)
}

// migProfile takes the profile from a MIG device name: "NVIDIA A100-SXM4-40GB MIG 1g.5gb"
// gives "1g.5gb", "… MIG 1c.3g.20gb" gives "1c.3g.20gb". A name without it gives "" and the
// attribute is left out: the GPU instance profile queries that would also tell need root.
func migProfile(name string) string {
	_, profile, ok := strings.Cut(name, " MIG ")
	if !ok {
		return ""
	}
	profile = strings.TrimSpace(profile)
	if profile == "" || strings.ContainsAny(profile, " \t") {
		return ""
	}
	return profile
}

// changed says whether two instance lists differ (by device, in order).
func changed(a, b []*Device) bool {
	if len(a) != len(b) {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return true
		}
	}
	return false
}

// Gone says whether inst is no longer one of the GPU's instances.
func (d *Device) Gone(inst *Device) bool {
	for _, i := range d.mig.instances {
		if i == inst {
			return false
		}
	}
	return true
}

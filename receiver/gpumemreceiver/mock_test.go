package gpumemreceiver

import (
	"fmt"
	"testing/fstest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

const (
	gib = int64(1) << 30
	mib = int64(1) << 20
)

// fakeGPU is a GPU for go-nvml's mock: plain fields the test sets, turned into mock funcs.
type fakeGPU struct {
	uuid, name, busID  string
	vbios              string // "" answers NOT_SUPPORTED
	total, reserved    int64
	used               int64 // v2 used, excluding reserved
	util               uint32
	compute, graphics  []nvml.ProcessInfo
	memV2, utilization nvml.Return // result codes; SUCCESS when zero value is overridden below
	memV1              nvml.Return
	processes          nvml.Return

	// reliability; nil maps / zero returns mean NOT_SUPPORTED (a consumer part)
	retired        map[nvml.PageRetirementCause]int
	retiredPending bool
	remap          *[4]int // corrected, uncorrected, pending, failed
	ecc            *[2]uint64
	eccErr         nvml.Return

	// mig nil: GetMigMode answers NOT_SUPPORTED (a pre-Ampere or consumer part)
	mig *fakeMIG

	// pmon are the per-process utilization samples; nil answers NOT_FOUND (none busy).
	pmon    []nvml.ProcessUtilizationSample
	pmonErr nvml.Return
	// pmonSince records the lastSeenTimestamp of each GetProcessUtilization call.
	pmonSince []uint64
	// persistence and computeMode nil answer NOT_SUPPORTED.
	persistence *bool
	computeMode *nvml.ComputeMode
	modeErr     nvml.Return
}

// fakeMIG is a GPU's MIG state; tests change it between scrapes to reconfigure.
type fakeMIG struct {
	enabled bool
	// slots are the MIG device indexes; nil is an index without an instance.
	slots []*fakeInstance
}

// fakeInstance is one MIG device.
type fakeInstance struct {
	uuid, name    string
	gi, ci        uint32
	total, used   int64
	compute       []nvml.ProcessInfo
	memErr, idErr nvml.Return
	dev           *mock.Device
}

func (m *fakeInstance) device() *mock.Device {
	if m.dev != nil {
		return m.dev
	}
	m.dev = &mock.Device{
		GetUUIDFunc:              func() (string, nvml.Return) { return m.uuid, nvml.SUCCESS },
		GetNameFunc:              func() (string, nvml.Return) { return m.name, nvml.SUCCESS },
		GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return int(m.gi), m.idErr },
		GetComputeInstanceIdFunc: func() (int, nvml.Return) { return int(m.ci), m.idErr },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: uint64(m.total), Used: uint64(m.used), Free: uint64(m.total - m.used)}, m.memErr
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			for i := range m.compute {
				m.compute[i].GpuInstanceId, m.compute[i].ComputeInstanceId = m.gi, m.ci
			}
			return m.compute, m.memErr
		},
		GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, m.memErr },
	}
	return m.dev
}

func newFakeGPU(i int) *fakeGPU {
	return &fakeGPU{
		uuid:  fmt.Sprintf("GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd", i),
		name:  "NVIDIA H100 80GB HBM3",
		vbios: "96.00.30.00.01",
		busID: fmt.Sprintf("00000000:%02X:00.0", 0x18+i),
		total: 81559 * mib, reserved: 512 * mib, used: 10 * gib, util: 42,
	}
}

func busID(s string) [32]int8 {
	var b [32]int8
	for i := 0; i < len(s) && i < 31; i++ {
		b[i] = int8(s[i])
	}
	return b
}

func (g *fakeGPU) device(index int) *mock.Device {
	return &mock.Device{
		GetUUIDFunc:   func() (string, nvml.Return) { return g.uuid, nvml.SUCCESS },
		GetNameFunc:   func() (string, nvml.Return) { return g.name, nvml.SUCCESS },
		GetSerialFunc: func() (string, nvml.Return) { return fmt.Sprintf("13230000%05d", index), nvml.SUCCESS },
		GetVbiosVersionFunc: func() (string, nvml.Return) {
			if g.vbios == "" {
				return "", nvml.ERROR_NOT_SUPPORTED
			}
			return g.vbios, nvml.SUCCESS
		},
		GetIndexFunc:       func() (int, nvml.Return) { return index, nvml.SUCCESS },
		GetMinorNumberFunc: func() (int, nvml.Return) { return index, nvml.SUCCESS },
		// The GPU instance queries need a privileged user (nvml.h); as if the collector were not.
		GetGpuInstanceByIdFunc: func(int) (nvml.GpuInstance, nvml.Return) { return nil, nvml.ERROR_NO_PERMISSION },
		GetPciInfoFunc:         func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{BusId: busID(g.busID)}, nvml.SUCCESS },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			if g.memV2 != nvml.SUCCESS {
				return nvml.Memory_v2{}, g.memV2
			}
			free := g.total - g.reserved - g.used
			return nvml.Memory_v2{Total: uint64(g.total), Reserved: uint64(g.reserved), Used: uint64(g.used), Free: uint64(free)}, nvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			if g.memV1 != nvml.SUCCESS {
				return nvml.Memory{}, g.memV1
			}
			free := g.total - g.reserved - g.used
			return nvml.Memory{Total: uint64(g.total), Used: uint64(g.total - free), Free: uint64(free)}, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return g.compute, g.processes
		},
		GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return g.graphics, g.processes
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			if g.mig != nil && g.mig.enabled {
				return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED // as NVML in MIG mode
			}
			return nvml.Utilization{Gpu: g.util}, g.utilization
		},
		GetRetiredPagesFunc: func(c nvml.PageRetirementCause) ([]uint64, nvml.Return) {
			if g.retired == nil {
				return nil, nvml.ERROR_NOT_SUPPORTED
			}
			return make([]uint64, g.retired[c]), nvml.SUCCESS
		},
		GetRetiredPagesPendingStatusFunc: func() (nvml.EnableState, nvml.Return) {
			if g.retired == nil {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			if g.retiredPending {
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		},
		GetRemappedRowsFunc: func() (int, int, bool, bool, nvml.Return) {
			if g.remap == nil {
				return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED
			}
			return g.remap[0], g.remap[1], g.remap[2] != 0, g.remap[3] != 0, nvml.SUCCESS
		},
		GetEccModeFunc: func() (nvml.EnableState, nvml.EnableState, nvml.Return) {
			if g.ecc == nil {
				return 0, 0, nvml.ERROR_NOT_SUPPORTED
			}
			return nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED, nvml.SUCCESS
		},
		GetTotalEccErrorsFunc: func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
			if g.ecc == nil {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			if g.eccErr != nvml.SUCCESS {
				return 0, g.eccErr
			}
			return g.ecc[t], nvml.SUCCESS
		},
		GetMigModeFunc: func() (int, int, nvml.Return) {
			switch {
			case g.mig == nil:
				return 0, 0, nvml.ERROR_NOT_SUPPORTED
			case g.mig.enabled:
				return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
			default:
				return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS
			}
		},
		GetMaxMigDeviceCountFunc: func() (int, nvml.Return) {
			if g.mig == nil || !g.mig.enabled {
				return 0, nvml.SUCCESS
			}
			return 7, nvml.SUCCESS
		},
		GetMigDeviceHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if g.mig == nil || !g.mig.enabled || i < 0 || i >= 7 {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			if i >= len(g.mig.slots) || g.mig.slots[i] == nil {
				return nil, nvml.ERROR_NOT_FOUND
			}
			return g.mig.slots[i].device(), nvml.SUCCESS
		},
		GetSupportedEventTypesFunc: func() (uint64, nvml.Return) {
			return nvml.EventTypeXidCriticalError, nvml.SUCCESS
		},
		RegisterEventsFunc: func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS },
		GetProcessUtilizationFunc: func(since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			g.pmonSince = append(g.pmonSince, since)
			switch {
			case g.pmonErr != nvml.SUCCESS:
				return nil, g.pmonErr
			case g.mig != nil && g.mig.enabled:
				return nil, nvml.ERROR_NOT_SUPPORTED // as NVML in MIG mode
			case g.pmon == nil:
				return nil, nvml.ERROR_NOT_FOUND
			}
			return g.pmon, nvml.SUCCESS
		},
		GetPersistenceModeFunc: func() (nvml.EnableState, nvml.Return) {
			switch {
			case g.persistence == nil:
				return 0, nvml.ERROR_NOT_SUPPORTED
			case g.modeErr != nvml.SUCCESS:
				return 0, g.modeErr
			case *g.persistence:
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		},
		GetComputeModeFunc: func() (nvml.ComputeMode, nvml.Return) {
			switch {
			case g.computeMode == nil:
				return 0, nvml.ERROR_NOT_SUPPORTED
			case g.modeErr != nvml.SUCCESS:
				return 0, g.modeErr
			}
			return *g.computeMode, nvml.SUCCESS
		},
	}
}

// fakeNVML is a mock library over fake GPUs. initErr makes Init fail until cleared.
type fakeNVML struct {
	*mock.Interface
	devices []*mock.Device
	// events feeds the event set.
	events chan xidAt
	// missing are the symbols the "library" lacks (an older driver branch).
	missing map[string]bool
}

// xidAt is one NVML Xid event: the index of the GPU it names and its code.
type xidAt struct {
	device int
	xid    uint64
}

func newFakeNVML(gpus ...*fakeGPU) *fakeNVML {
	f := &fakeNVML{events: make(chan xidAt, 16)}
	for i, g := range gpus {
		f.devices = append(f.devices, g.device(i))
	}
	f.Interface = &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "570.86.15", nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(f.devices), nvml.SUCCESS },
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(name string) error {
				if f.missing[name] {
					return fmt.Errorf("undefined symbol: %s", name)
				}
				return nil
			}}
		},
		EventSetCreateFunc: func() (nvml.EventSet, nvml.Return) {
			return &mock.EventSet{
				WaitFunc: func(timeoutMs uint32) (nvml.EventData, nvml.Return) {
					select {
					case e := <-f.events:
						return nvml.EventData{Device: f.devices[e.device], EventType: nvml.EventTypeXidCriticalError, EventData: e.xid}, nvml.SUCCESS
					case <-time.After(time.Duration(timeoutMs) * time.Millisecond):
						return nvml.EventData{}, nvml.ERROR_TIMEOUT
					}
				},
				FreeFunc: func() nvml.Return { return nvml.SUCCESS },
			}, nvml.SUCCESS
		},
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(f.devices) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return f.devices[i], nvml.SUCCESS
		},
	}
	return f
}

// procEntry is one process of an in-memory /proc: its comm and its cgroup file.
type procEntry struct {
	comm, cgroup string
}

// procTree is an in-memory /proc for the given pids.
func procTree(entries map[uint32]procEntry) fstest.MapFS {
	fsys := fstest.MapFS{}
	for pid, e := range entries {
		fsys[fmt.Sprintf("%d/comm", pid)] = &fstest.MapFile{Data: []byte(e.comm + "\n")}
		fsys[fmt.Sprintf("%d/cgroup", pid)] = &fstest.MapFile{Data: []byte(e.cgroup)}
		fsys[fmt.Sprintf("%d/status", pid)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("Name:\t%s\nNSpid:\t%d\t1\n", e.comm, pid))}
	}
	return fsys
}

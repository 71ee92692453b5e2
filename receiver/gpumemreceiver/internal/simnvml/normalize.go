package simnvml

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Defaults: an H100 SXM5 80GB as NVML reports it on a 550-series driver.
const (
	DefaultDriverVersion = "550.54.15"
	DefaultGPUName       = "NVIDIA H100 80GB HBM3"
	// DefaultVBIOSVersion has the shape nvidia-smi prints; the number is made up.
	DefaultVBIOSVersion = "96.00.89.00.01"
	// DefaultMemoryTotal is NVML's total for an H100 80GB: 81559 MiB.
	DefaultMemoryTotal Bytes = 81559 << 20
	// DefaultReserved is a typical driver/firmware reservation (memory info v2).
	DefaultReserved Bytes = 512 << 20
	maxGPUs               = 64
)

// dgxH100Buses are the PCI buses of the eight GPUs of a DGX H100, used for
// default bus IDs so simulated Xid lines look like real ones.
var dgxH100Buses = [8]int{0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb}

// supportKeys are the features a GPU's supports map may switch off.
var supportKeys = []string{"memory_info_v2", "utilization", "retired_pages", "remapped_rows", "ecc", "mig", "events", "serial", "vbios",
	"process_utilization", "persistence_mode", "compute_mode"}

// Normalize fills in defaults and validates the scenario, returning the first
// problem with its key path ("gpus[2].processes[0].pid: …"). It is idempotent;
// LoadScenario and New call it.
func (s *Scenario) Normalize() error {
	if s.Duration < 0 {
		return fmt.Errorf("duration: must not be negative, got %s", s.Duration)
	}
	if s.DriverVersion == "" {
		s.DriverVersion = DefaultDriverVersion
	}
	if s.NVMLVersion == "" {
		s.NVMLVersion = "12." + s.DriverVersion
	}
	if s.KmsgFile != "" && !filepath.IsAbs(s.KmsgFile) && s.Dir != "" {
		s.KmsgFile = filepath.Join(s.Dir, s.KmsgFile)
	}
	if len(s.GPUs) == 0 {
		return fmt.Errorf("gpus: at least one GPU is required")
	}
	if len(s.GPUs) > maxGPUs {
		return fmt.Errorf("gpus: %d GPUs, at most %d are supported", len(s.GPUs), maxGPUs)
	}
	if err := s.normalizeIndexes(); err != nil {
		return err
	}
	seen := map[string]string{}
	for i := range s.GPUs {
		if err := s.GPUs[i].normalize(fmt.Sprintf("gpus[%d]", i), s, seen); err != nil {
			return err
		}
	}
	if err := s.checkPIDs(); err != nil {
		return err
	}
	for i, e := range s.Events {
		if err := e.check(fmt.Sprintf("events[%d]", i), s); err != nil {
			return err
		}
	}
	for i, l := range s.LogLines {
		if err := l.check(fmt.Sprintf("log_lines[%d]", i), s.Duration); err != nil {
			return err
		}
	}
	if err := s.normalizePods(); err != nil {
		return err
	}
	for i := range s.Events {
		if s.Events[i].Via == "" {
			s.Events[i].Via = ViaBoth
		}
	}
	slices.SortStableFunc(s.Events, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	slices.SortStableFunc(s.LogLines, func(a, b LogLine) int { return cmp.Compare(a.At, b.At) })
	return nil
}

// normalizeIndexes checks that indexes are 0..n-1 and orders GPUs by index.
func (s *Scenario) normalizeIndexes() error {
	taken := make([]bool, len(s.GPUs))
	for i := range s.GPUs {
		g := &s.GPUs[i]
		if g.Index == nil {
			idx := i
			g.Index = &idx
		}
		idx := *g.Index
		if idx < 0 || idx >= len(s.GPUs) {
			return fmt.Errorf("gpus[%d].index: %d is out of range: indexes run 0..%d", i, idx, len(s.GPUs)-1)
		}
		if taken[idx] {
			return fmt.Errorf("gpus[%d].index: index %d is used twice", i, idx)
		}
		taken[idx] = true
	}
	minors := map[int]int{}
	for i := range s.GPUs {
		g := &s.GPUs[i]
		if g.Minor == nil {
			g.Minor = g.Index
		}
		if *g.Minor < 0 || *g.Minor > 255 {
			return fmt.Errorf("gpus[%d].minor: %d is out of range 0..255", i, *g.Minor)
		}
		if other, dup := minors[*g.Minor]; dup {
			return fmt.Errorf("gpus[%d].minor: minor %d is also that of gpus[%d]", i, *g.Minor, other)
		}
		minors[*g.Minor] = i
	}
	slices.SortStableFunc(s.GPUs, func(a, b GPU) int { return *a.Index - *b.Index })
	return nil
}

func (g *GPU) normalize(path string, s *Scenario, seen map[string]string) error {
	idx := *g.Index
	if g.UUID == "" {
		g.UUID = defaultUUID(idx)
	}
	if !strings.HasPrefix(g.UUID, "GPU-") || len(g.UUID) > 80 {
		return fmt.Errorf("%s.uuid: %q must start with GPU- (at most 80 characters)", path, g.UUID)
	}
	if g.Name == "" {
		g.Name = DefaultGPUName
	}
	if g.VBIOS == "" {
		g.VBIOS = DefaultVBIOSVersion
	}
	if g.Serial == "" {
		g.Serial = fmt.Sprintf("16549220%05d", 10417+idx)
	}
	if g.BusID == "" {
		bus := 0x01 + idx - len(dgxH100Buses)
		if idx < len(dgxH100Buses) {
			bus = dgxH100Buses[idx]
		}
		g.BusID = fmt.Sprintf("00000000:%02X:00.0", bus)
	}
	addr, err := parseBusID(g.BusID)
	if err != nil {
		return fmt.Errorf("%s.bus_id: %w", path, err)
	}
	g.BusID = addr.nvml()
	for _, k := range []string{"uuid:" + g.UUID, "bus_id:" + g.BusID} {
		if other, dup := seen[k]; dup {
			return fmt.Errorf("%s: %s is also used by %s", path, k, other)
		}
		seen[k] = path
	}
	if g.MemoryTotal == 0 {
		g.MemoryTotal = DefaultMemoryTotal
	}
	if g.Reserved == nil {
		r := min(DefaultReserved, g.MemoryTotal/8)
		g.Reserved = &r
	}
	if *g.Reserved >= g.MemoryTotal {
		return fmt.Errorf("%s.reserved: %s must be less than memory_total %s", path, formatQuantity(float64(*g.Reserved)), formatQuantity(float64(g.MemoryTotal)))
	}
	if g.ECCMode == nil {
		on := true
		g.ECCMode = &on
	}
	if g.PersistenceMode == nil {
		on := true
		g.PersistenceMode = &on
	}
	if g.ComputeMode == "" {
		g.ComputeMode = ComputeModeDefault
	}
	if _, ok := computeModes[g.ComputeMode]; !ok {
		return fmt.Errorf("%s.compute_mode: %q, want default, exclusive_process or prohibited", path, g.ComputeMode)
	}
	for k := range g.Supports {
		if !slices.Contains(supportKeys, k) {
			return fmt.Errorf("%s.supports: unknown feature %q, want one of %v", path, k, supportKeys)
		}
	}
	if err := g.checkSeries(path); err != nil {
		return err
	}
	if err := normalizeProcesses(path, g.Processes, s.Duration, float64(g.MemoryTotal)); err != nil {
		return err
	}
	if err := g.normalizeGarbage(path, s.Duration, seen); err != nil {
		return err
	}
	if g.MIG != nil {
		return g.MIG.normalize(path+".mig", g, s, seen)
	}
	return nil
}

// normalizeProcesses normalizes the processes of a GPU or MIG instance at path.
func normalizeProcesses(path string, procs []Process, loop time.Duration, total float64) error {
	pids := map[uint32]bool{}
	for i := range procs {
		p := &procs[i]
		ppath := fmt.Sprintf("%s.processes[%d]", path, i)
		if err := p.normalize(ppath, loop, total); err != nil {
			return err
		}
		if pids[p.PID] {
			return fmt.Errorf("%s.pid: pid %d is listed twice on this device", ppath, p.PID)
		}
		pids[p.PID] = true
	}
	return nil
}

func (g *GPU) checkSeries(path string) error {
	const big = 1 << 50 // counts: any sane number
	total := float64(g.MemoryTotal)
	for _, c := range []struct {
		key string
		s   Series
		hi  float64
	}{
		{"utilization", g.Utilization, 100},
		{"memory_utilization", g.MemoryUtilization, 100},
		{"unattributed", g.Unattributed, total},
		{"retired_pages.single_bit_ecc", g.RetiredPages.SingleBitECC, 4096},
		{"retired_pages.double_bit_ecc", g.RetiredPages.DoubleBitECC, 4096},
		{"retired_pages.pending", g.RetiredPages.Pending, 1},
		{"remapped_rows.correctable", g.RemappedRows.Correctable, big},
		{"remapped_rows.uncorrectable", g.RemappedRows.Uncorrectable, big},
		{"remapped_rows.pending", g.RemappedRows.Pending, 1},
		{"remapped_rows.failed", g.RemappedRows.Failed, 1},
		{"ecc_errors.corrected", g.ECCErrors.Corrected, big},
		{"ecc_errors.uncorrected", g.ECCErrors.Uncorrected, big},
	} {
		if err := c.s.check(path+"."+c.key, c.hi); err != nil {
			return err
		}
	}
	return nil
}

// Process types.
const (
	TypeCompute  = "compute"
	TypeGraphics = "graphics"
	TypeBoth     = "both"
)

func (p *Process) normalize(path string, loop time.Duration, total float64) error {
	if p.PID == 0 {
		return fmt.Errorf("%s.pid: required and must be positive", path)
	}
	if p.Name == "" {
		return fmt.Errorf("%s.name: required", path)
	}
	if strings.ContainsAny(p.Name, "\n\x00") {
		return fmt.Errorf("%s.name: must be one line", path)
	}
	if p.Type == "" {
		p.Type = TypeCompute
	}
	if p.Type != TypeCompute && p.Type != TypeGraphics && p.Type != TypeBoth {
		return fmt.Errorf("%s.type: %q, want compute, graphics or both", path, p.Type)
	}
	if p.Cgroup != "" && (p.ContainerID != "" || p.PodUID != "") {
		return fmt.Errorf("%s: give either cgroup or container_id/pod_uid, not both", path)
	}
	if p.ContainerID != "" && !isLowerHex(p.ContainerID, 64) {
		return fmt.Errorf("%s.container_id: %q must be 64 lowercase hex digits", path, p.ContainerID)
	}
	if p.PodUID != "" && !isPodUID(p.PodUID) {
		return fmt.Errorf("%s.pod_uid: %q must be a lowercase UUID", path, p.PodUID)
	}
	if p.PodUID != "" && p.ContainerID == "" {
		return fmt.Errorf("%s.pod_uid: needs container_id too", path)
	}
	if p.VPID < 0 {
		return fmt.Errorf("%s.vpid: must not be negative", path)
	}
	if p.Start < 0 || p.Stop < 0 {
		return fmt.Errorf("%s: start and stop must not be negative", path)
	}
	if p.Stop != 0 && p.Stop <= p.Start {
		return fmt.Errorf("%s.stop: %s must be later than start %s", path, p.Stop, p.Start)
	}
	if loop > 0 && p.Start >= loop {
		return fmt.Errorf("%s.start: %s is not within the scenario duration %s", path, p.Start, loop)
	}
	if err := p.SMUtilization.check(path+".sm_utilization", 100); err != nil {
		return err
	}
	if err := p.MemoryUtilization.check(path+".memory_utilization", 100); err != nil {
		return err
	}
	return p.Memory.check(path+".memory", total)
}

// checkPIDs makes sure a pid on several GPUs is described the same way on
// each: it is one process, with one /proc entry.
func (s *Scenario) checkPIDs() error {
	type first struct {
		path string
		p    *Process
	}
	byPID := map[uint32]first{}
	var err error
	s.eachProcess(func(path string, p *Process, _ *GPU, _ *MIGInstance) {
		f, ok := byPID[p.PID]
		if !ok {
			byPID[p.PID] = first{path, p}
			return
		}
		if err == nil && (f.p.Name != p.Name || f.p.Cgroup != p.Cgroup || f.p.ContainerID != p.ContainerID || f.p.PodUID != p.PodUID || f.p.VPID != p.VPID) {
			err = fmt.Errorf("%s: pid %d differs from %s in name, cgroup, container_id, pod_uid or vpid", path, p.PID, f.path)
		}
	})
	return err
}

// eachProcess calls fn with every process of the scenario, on whole GPUs and in MIG
// instances (inst nil for the former), with its key path.
func (s *Scenario) eachProcess(fn func(path string, p *Process, g *GPU, inst *MIGInstance)) {
	for gi := range s.GPUs {
		g := &s.GPUs[gi]
		for pi := range g.Processes {
			fn(fmt.Sprintf("gpus[%d].processes[%d]", gi, pi), &g.Processes[pi], g, nil)
		}
		if g.MIG == nil {
			continue
		}
		for ii := range g.MIG.Instances {
			inst := &g.MIG.Instances[ii]
			for pi := range inst.Processes {
				fn(fmt.Sprintf("gpus[%d].mig.instances[%d].processes[%d]", gi, ii, pi), &inst.Processes[pi], g, inst)
			}
		}
	}
}

// Where an event is delivered.
const (
	ViaBoth = "both"
	ViaNVML = "nvml"
	ViaKmsg = "kmsg"
)

func (e Event) check(path string, s *Scenario) error {
	if e.At < 0 || (s.Duration > 0 && e.At >= s.Duration) {
		return fmt.Errorf("%s.at: %s is not within the scenario duration %s", path, e.At, s.Duration)
	}
	if e.GPU < 0 || e.GPU >= len(s.GPUs) {
		return fmt.Errorf("%s.gpu: no GPU with index %d", path, e.GPU)
	}
	if e.Xid == 0 || e.Xid > 1<<20 {
		return fmt.Errorf("%s.xid: required, a positive Xid code", path)
	}
	if e.Via != "" && e.Via != ViaBoth && e.Via != ViaNVML && e.Via != ViaKmsg {
		return fmt.Errorf("%s.via: %q, want both, nvml or kmsg", path, e.Via)
	}
	if strings.ContainsAny(e.Name+e.Message, "\n\x00") {
		return fmt.Errorf("%s: name and message must be one line", path)
	}
	return nil
}

func (l LogLine) check(path string, loop time.Duration) error {
	if l.At < 0 || (loop > 0 && l.At >= loop) {
		return fmt.Errorf("%s.at: %s is not within the scenario duration %s", path, l.At, loop)
	}
	if l.Path == "" || !filepath.IsLocal(l.Path) {
		return fmt.Errorf("%s.path: %q must be a relative path inside the log directory", path, l.Path)
	}
	if l.Line == "" {
		return fmt.Errorf("%s.line: required", path)
	}
	switch l.Format {
	case "", LogFormatCRI, LogFormatDocker:
	default:
		return fmt.Errorf("%s.format: %q is not one of cri, docker", path, l.Format)
	}
	return nil
}

// defaultUUID derives a stable GPU UUID from the index, so scenarios that
// omit uuids still produce the same resources run after run.
func defaultUUID(idx int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "simnvml gpu %d", idx))
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isPodUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, part := range strings.Split(s, "-") {
		if !isLowerHex(part, []int{8, 4, 4, 4, 12}[min(i, 4)]) || i > 4 {
			return false
		}
	}
	return true
}

package simnvml

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// scenarioDir is the repository's testdata/scenarios.
var scenarioDir = filepath.Join("..", "..", "..", "..", "testdata", "scenarios")

// To regenerate testdata/scenarios/builtin.yaml after changing BuiltinScenario:
//
//	go test ./receiver/gpumemreceiver/internal/simnvml -run TestBuiltinYAML -update
var update = flag.Bool("update", false, "rewrite testdata/scenarios/builtin.yaml from BuiltinScenario")

const builtinHeader = `# The built-in scenario: what backend: simulated plays when simulated.scenario
# is unset. Generated from BuiltinScenario() (simnvml/builtin.go), which
# documents the story GPU by GPU; TestBuiltinYAML keeps the two equal:
#   go test ./receiver/gpumemreceiver/internal/simnvml -run TestBuiltinYAML -update
# Keys are documented in README.md beside this file.
`

func TestBuiltinScenario(t *testing.T) {
	s := BuiltinScenario()
	require.NoError(t, s.Normalize())
	assert.Len(t, s.GPUs, 8)
	procs := 0
	for _, g := range s.GPUs {
		assert.Equal(t, DefaultGPUName, g.Name)
		assert.Equal(t, Bytes(81559<<20), g.MemoryTotal)
		procs += len(g.Processes)
	}
	assert.GreaterOrEqual(t, procs, 24, "a few dozen processes")
	assert.Equal(t, 60*time.Second, s.Duration)
}

func TestBuiltinYAML(t *testing.T) {
	path := filepath.Join(scenarioDir, "builtin.yaml")
	if *update {
		var buf bytes.Buffer
		buf.WriteString(builtinHeader)
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		require.NoError(t, enc.Encode(BuiltinScenario()))
		require.NoError(t, enc.Close())
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	loaded, err := LoadScenario(path)
	require.NoError(t, err)
	want := BuiltinScenario()
	want.Dir = loaded.Dir
	assert.Equal(t, want, loaded, "builtin.yaml and BuiltinScenario() differ; regenerate with -update")
}

func TestLoadScenarioFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	pods, err := filepath.Glob(filepath.Join(scenarioDir, "kubernetes", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, pods)
	files = append(files, pods...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := LoadScenario(f)
			require.NoError(t, err)
			_, err = New(s, Options{})
			require.NoError(t, err)
		})
	}
}

func TestLoadScenarioLeak(t *testing.T) {
	s, err := LoadScenario(filepath.Join(scenarioDir, "leak.yaml"))
	require.NoError(t, err)
	require.Len(t, s.GPUs, 1)
	abs, err := filepath.Abs(scenarioDir)
	require.NoError(t, err)
	assert.Equal(t, abs, s.Dir)
	assert.Equal(t, filepath.Join(abs, "leak-kmsg.log"), s.KmsgFile, "kmsg_file resolves against the scenario's directory")
}

func TestParseScenarioDefaults(t *testing.T) {
	s := parse(t, `
gpus:
  - processes: [{pid: 10, name: python3, memory: 1GiB}]
  - {}
`)
	assert.Equal(t, time.Duration(0), s.Duration)
	assert.Equal(t, DefaultDriverVersion, s.DriverVersion)
	assert.Equal(t, "12."+DefaultDriverVersion, s.NVMLVersion)
	g := s.GPUs[1]
	assert.Equal(t, 1, *g.Index)
	assert.Equal(t, defaultUUID(1), g.UUID)
	assert.True(t, strings.HasPrefix(g.UUID, "GPU-"))
	assert.Equal(t, "00000000:2A:00.0", g.BusID)
	assert.Equal(t, DefaultMemoryTotal, g.MemoryTotal)
	assert.Equal(t, DefaultReserved, *g.Reserved)
	assert.True(t, *g.ECCMode)
	assert.Equal(t, TypeCompute, s.GPUs[0].Processes[0].Type)
	assert.NotEqual(t, s.GPUs[0].UUID, g.UUID)
}

func TestParseScenarioIndexOrdersGPUs(t *testing.T) {
	s := parse(t, `
gpus:
  - {index: 1, uuid: GPU-b}
  - {index: 0, uuid: GPU-a, bus_id: "0000:3b:00.0"}
`)
	assert.Equal(t, "GPU-a", s.GPUs[0].UUID)
	assert.Equal(t, "00000000:3B:00.0", s.GPUs[0].BusID, "bus ids are written the NVML way")
}

func TestParseScenarioErrors(t *testing.T) {
	const proc = "{pid: 10, name: p, memory: 1GiB}"
	tests := map[string]struct{ yaml, want string }{
		"empty":              {"", "'gpus' is required"},
		"no gpus":            {"gpus: []", "gpus: at least one GPU"},
		"unknown key":        {"gpus: [{}]\nfoo: 1", "line 2: field foo not found"},
		"unknown gpu key":    {"gpus:\n  - {colour: red}", "line 2: field colour not found"},
		"two documents":      {"gpus: [{}]\n---\ngpus: [{}]", "more than one YAML document"},
		"bad duration":       {"duration: 60\ngpus: [{}]", "line 1: cannot unmarshal !!int `60` into time.Duration"},
		"negative duration":  {"duration: -1s\ngpus: [{}]", "duration: must not be negative"},
		"index range":        {"gpus: [{index: 3}]", "gpus[0].index: 3 is out of range"},
		"index twice":        {"gpus: [{index: 0}, {index: 0}]", "gpus[1].index: index 0 is used twice"},
		"bad uuid":           {"gpus: [{uuid: abc}]", "gpus[0].uuid"},
		"uuid twice":         {"gpus: [{uuid: GPU-a}, {uuid: GPU-a}]", "gpus[1]: uuid:GPU-a is also used by gpus[0]"},
		"bad bus id":         {"gpus: [{bus_id: 3b:00}]", "gpus[0].bus_id"},
		"bus id twice":       {"gpus: [{bus_id: '0000:3b:00.0'}, {bus_id: '00000000:3B:00.0'}]", "is also used by gpus[0]"},
		"bad memory":         {"gpus: [{memory_total: lots}]", `line 1: "lots" is not a quantity`},
		"fractional bytes":   {"gpus: [{memory_total: 1.5}]", "not a whole number of bytes"},
		"reserved too big":   {"gpus: [{memory_total: 1GiB, reserved: 1GiB}]", "gpus[0].reserved: 1GiB must be less than memory_total 1GiB"},
		"utilization > 100":  {"gpus: [{utilization: 120}]", "gpus[0].utilization: value 120 exceeds the maximum 100"},
		"unattributed big":   {"gpus: [{memory_total: 1GiB, unattributed: 2GiB}]", "gpus[0].unattributed"},
		"pending not a flag": {"gpus: [{retired_pages: {pending: 2}}]", "gpus[0].retired_pages.pending"},
		"bad support key":    {"gpus: [{supports: {warp_drive: false}}]", `gpus[0].supports: unknown feature "warp_drive"`},
		"bad series step":    {"gpus: [{utilization: {steps: [{at: 2s, value: 1}, {at: 1s, value: 2}]}}]", "gpus[0].utilization: steps[1].at must be later"},
		"no pid":             {"gpus: [{processes: [{name: p, memory: 1}]}]", "gpus[0].processes[0].pid: required"},
		"no name":            {"gpus: [{processes: [{pid: 1, memory: 1}]}]", "gpus[0].processes[0].name: required"},
		"bad type":           {"gpus: [{processes: [{pid: 1, name: p, type: vulkan}]}]", `processes[0].type: "vulkan"`},
		"cgroup and id":      {"gpus: [{processes: [{pid: 1, name: p, cgroup: '0::/', container_id: " + strings.Repeat("a", 64) + "}]}]", "either cgroup or container_id"},
		"bad container id":   {"gpus: [{processes: [{pid: 1, name: p, container_id: abc}]}]", "container_id"},
		"bad pod uid":        {"gpus: [{processes: [{pid: 1, name: p, container_id: " + strings.Repeat("a", 64) + ", pod_uid: nope}]}]", "pod_uid"},
		"pod without ctr":    {"gpus: [{processes: [{pid: 1, name: p, pod_uid: 6b0e7c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c}]}]", "needs container_id"},
		"stop before start":  {"gpus: [{processes: [{pid: 1, name: p, start: 5s, stop: 2s}]}]", "processes[0].stop: 2s must be later than start 5s"},
		"start after loop":   {"duration: 10s\ngpus: [{processes: [{pid: 1, name: p, start: 15s}]}]", "processes[0].start: 15s is not within"},
		"memory too big":     {"gpus: [{memory_total: 1GiB, processes: [{pid: 1, name: p, memory: 2GiB}]}]", "processes[0].memory"},
		"pid twice on gpu":   {"gpus: [{processes: [" + proc + ", " + proc + "]}]", "processes[1].pid: pid 10 is listed twice"},
		"pid differs":        {"gpus: [{processes: [" + proc + "]}, {processes: [{pid: 10, name: q}]}]", "gpus[1].processes[0]: pid 10 differs from gpus[0].processes[0]"},
		"event gpu":          {"gpus: [{}]\nevents: [{at: 1s, gpu: 1, xid: 31}]", "events[0].gpu: no GPU with index 1"},
		"event xid":          {"gpus: [{}]\nevents: [{at: 1s, gpu: 0}]", "events[0].xid: required"},
		"event via":          {"gpus: [{}]\nevents: [{at: 1s, gpu: 0, xid: 31, via: dbus}]", `events[0].via: "dbus"`},
		"event after loop":   {"duration: 10s\ngpus: [{}]\nevents: [{at: 10s, gpu: 0, xid: 31}]", "events[0].at: 10s is not within"},
		"event two lines":    {"gpus: [{}]\nevents: [{at: 1s, gpu: 0, xid: 31, message: \"a\\nb\"}]", "must be one line"},
		"log path escapes":   {"gpus: [{}]\nlog_lines: [{at: 1s, path: ../x.log, line: boom}]", "log_lines[0].path"},
		"log path absolute":  {"gpus: [{}]\nlog_lines: [{at: 1s, path: /tmp/x.log, line: boom}]", "log_lines[0].path"},
		"log line empty":     {"gpus: [{}]\nlog_lines: [{at: 1s, path: x.log}]", "log_lines[0].line: required"},
		"series error line":  {"gpus:\n  - {}\n  - utilization: {ramp: {from: 1}}", `line 3: missing key "to"`},
		"mig no profile":     {"gpus: [{mig: {instances: [{}]}}]", "gpus[0].mig.instances[0].profile"},
		"mig bad profile":    {"gpus: [{mig: {instances: [{profile: big}]}}]", `"big" is not a MIG profile`},
		"mig bad uuid":       {"gpus: [{mig: {instances: [{profile: 1g.10gb, uuid: GPU-x}]}}]", "mig.instances[0].uuid"},
		"mig uuid twice":     {"gpus: [{mig: {instances: [{profile: 1g.10gb, uuid: MIG-a}, {profile: 1g.10gb, uuid: MIG-a}]}}]", "instances[1].uuid: MIG-a is also used"},
		"mig ids twice":      {"gpus: [{mig: {instances: [{profile: 1g.10gb, gpu_instance_id: 7}, {profile: 1g.10gb, gpu_instance_id: 7}]}}]", "gpu_instance_id 7 with compute_instance_id 0 is also used"},
		"mig too big":        {"gpus: [{memory_total: 8GiB, mig: {instances: [{profile: 1g.10gb}]}}]", "mig.instances[0].memory_total: 9984MiB does not fit"},
		"mig flag":           {"gpus: [{mig: {enabled: 2}}]", "gpus[0].mig.enabled: value 2 exceeds the maximum 1"},
		"mig stop":           {"gpus: [{mig: {instances: [{profile: 1g.10gb, start: 5s, stop: 1s}]}}]", "instances[0].stop"},
		"mig process":        {"gpus: [{mig: {instances: [{profile: 1g.10gb, processes: [{pid: 1}]}]}}]", "gpus[0].mig.instances[0].processes[0].name: required"},
		"mig pid differs":    {"gpus: [{processes: [" + proc + "], mig: {instances: [{profile: 1g.10gb, processes: [{pid: 10, name: q}]}]}}]", "gpus[0].mig.instances[0].processes[0]: pid 10 differs"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tt.yaml), "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseScenarioTooManyGPUs(t *testing.T) {
	_, err := ParseScenario([]byte("gpus: ["+strings.Repeat("{},", 65)+"]"), "")
	assert.ErrorContains(t, err, "at most 64")
}

func TestLoadScenarioErrorsNameTheFile(t *testing.T) {
	_, err := LoadScenario(filepath.Join(t.TempDir(), "missing.yaml"))
	assert.ErrorContains(t, err, "missing.yaml")

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("gpus: [{utilization: 200}]"), 0o644))
	_, err = LoadScenario(bad)
	assert.ErrorContains(t, err, "bad.yaml: gpus[0].utilization")
}

func TestNormalizeIsIdempotent(t *testing.T) {
	s := BuiltinScenario()
	before := *s
	require.NoError(t, s.Normalize())
	assert.Equal(t, before, *s)
}

// FuzzParseScenario feeds arbitrary YAML to the scenario parser: it must
// never panic, and a scenario it accepts must build a simulator that answers.
func FuzzParseScenario(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("gpus: [{memory_total: 1, processes: [{pid: 1, name: a, memory: 1}]}]\nevents: [{at: 0s, gpu: 0, xid: 1}]")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseScenario([]byte(in), "")
		if err != nil {
			return
		}
		sim, err := New(s, Options{})
		if err != nil {
			t.Fatalf("parsed scenario rejected by New: %v", err)
		}
		sim.Init()
		for _, d := range sim.devices {
			d.GetMemoryInfo_v2()
			d.GetComputeRunningProcesses()
			d.GetTotalEccErrors(0, 0)
		}
	})
}

// Package fakenvml builds a stand-in for the NVIDIA driver's libnvidia-ml.so.1 from
// fakenvml.c and writes the scenario it answers from, so tests can run the real NVML path
// (go-nvml dlopening a C library and calling its symbols through cgo) on a machine without
// a GPU. The library re-reads the scenario on every call: a test changes what the "driver"
// says by rewriting the file while the collector runs.
package fakenvml // import "github.com/gpumem/otelcol-gpumem/test/fakenvml"

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Variant is a build of the library; Defines drop symbols to stand for an older driver.
type Variant struct {
	Name    string
	Defines []string
}

// The variants the tests run. Which branch added which call is in the receiver's README.
var (
	// Full exports every symbol the receiver calls, as a current driver does.
	Full = Variant{Name: "full"}
	// R470 lacks what R510 added: memory info v2 and the v3 process lists.
	R470 = Variant{Name: "r470", Defines: []string{"FAKENVML_NO_MEMORY_V2", "FAKENVML_NO_PROCS_V3"}}
	// R450 also lacks the v2 process lists (R460).
	R450 = Variant{Name: "r450", Defines: []string{"FAKENVML_NO_MEMORY_V2", "FAKENVML_NO_PROCS_V3", "FAKENVML_NO_PROCS_V2"}}
	// NoRemap lacks nvmlDeviceGetRemappedRows.
	NoRemap = Variant{Name: "noremap", Defines: []string{"FAKENVML_NO_REMAPPED_ROWS"}}
	// NoMIG lacks every MIG call.
	NoMIG = Variant{Name: "nomig", Defines: []string{"FAKENVML_NO_MIG"}}
	// NoProcessUtilization lacks nvmlDeviceGetProcessUtilization.
	NoProcessUtilization = Variant{Name: "nopmon", Defines: []string{"FAKENVML_NO_PROCESS_UTILIZATION"}}
)

// ScenarioEnv names the scenario file the library reads.
const ScenarioEnv = "FAKENVML_SCENARIO"

// HostProcEnv names a procfs of the host's PID namespace; with it set the scenario's pids are
// host pids, and the library translates them into the caller's PID namespace and leaves out
// those it cannot see, as the NVIDIA driver does since 535.113.01 (see fakenvml.c).
const HostProcEnv = "FAKENVML_HOST_PROC"

// sourceDir is this package's directory; the C source is in c/ (Go allows no C file beside a package without cgo).
func sourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// HeaderDir is the directory of the nvml.h that go-nvml is built against: the go-nvml
// version go.mod requires, from the module cache, so struct layouts match exactly.
func HeaderDir() (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/NVIDIA/go-nvml")
	cmd.Dir = sourceDir()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("find go-nvml in the module cache: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "pkg", "nvml")
	if _, err := os.Stat(filepath.Join(dir, "nvml.h")); err != nil {
		return "", fmt.Errorf("find nvml.h of go-nvml: %w", err)
	}
	return dir, nil
}

// Build compiles the variant into dir with the system C compiler ($CC, else gcc) and returns
// the library's path.
func Build(dir string, v Variant) (string, error) {
	hdr, err := HeaderDir()
	if err != nil {
		return "", err
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	out := filepath.Join(dir, "libnvidia-ml-"+v.Name+".so.1")
	args := []string{"-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-Wno-deprecated-declarations",
		"-fvisibility=hidden", "-DNVML_NO_UNVERSIONED_FUNC_DEFS", "-I" + hdr}
	for _, d := range v.Defines {
		args = append(args, "-D"+d)
	}
	args = append(args, "-o", out, filepath.Join(sourceDir(), "c", "fakenvml.c"), "-lpthread")
	if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("compile the stand-in NVML library (%s): %w\n%s", v.Name, err, msg)
	}
	return out, nil
}

// MustBuild is Build for tests.
func MustBuild(t testing.TB, dir string, v Variant) string {
	t.Helper()
	path, err := Build(dir, v)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Scenario is what the library answers: key=value pairs (see fakenvml.c for the keys).
type Scenario map[string]string

// Set sets a key to fmt.Sprint of v.
func (s Scenario) Set(key string, v any) Scenario {
	s[key] = fmt.Sprint(v)
	return s
}

// GPU sets gpu.<i>.<field>.
func (s Scenario) GPU(i int, field string, v any) Scenario {
	return s.Set(fmt.Sprintf("gpu.%d.%s", i, field), v)
}

// Write replaces the file at path atomically (write and rename), so the library never
// reads half a scenario.
func (s Scenario) Write(path string) error {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, s[k])
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write scenario: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write scenario: %w", err)
	}
	return nil
}

// Clone copies the scenario.
func (s Scenario) Clone() Scenario {
	c := make(Scenario, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

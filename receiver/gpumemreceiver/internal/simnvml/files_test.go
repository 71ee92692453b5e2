package simnvml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fileScenario = `
duration: 60s
gpus: [{}, {}, {bus_id: "00000000:3B:00.0"}]
events:
  - {at: 20s, gpu: 2, xid: 31, pid: 1234, name: python3, message: "Ch 00000008, intr 10000000. MMU Fault"}
  - {at: 25s, gpu: 1, xid: 79}
  - {at: 40s, gpu: 2, xid: 13, via: nvml}
log_lines:
  - {at: 30s, path: app/train.log, line: "torch.OutOfMemoryError: CUDA out of memory."}
`

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestFilesWrittenAtScenarioTimes(t *testing.T) {
	dir := t.TempDir()
	kmsg := filepath.Join(dir, "kmsg")
	require.NoError(t, os.WriteFile(kmsg, []byte("stale\n"), 0o644))
	sim, clk := newTestSim(t, parse(t, fileScenario), Options{
		KmsgPath: kmsg, LogDir: dir, FlushInterval: time.Hour,
		BootTime: epoch.Add(-10 * time.Second),
	})
	require.NoError(t, sim.Start())
	defer sim.Stop()

	assert.Equal(t, []string{""}, readLines(t, kmsg), "Start empties the file it owns")

	clk.Set(21 * time.Second)
	require.NoError(t, sim.Flush())
	assert.Equal(t, []string{
		"4,0,30000000,-;NVRM: Xid (PCI:0000:3b:00): 31, pid=1234, name=python3, Ch 00000008, intr 10000000. MMU Fault",
	}, readLines(t, kmsg))

	clk.Set(45 * time.Second)
	require.NoError(t, sim.Flush())
	lines := readLines(t, kmsg)
	require.Len(t, lines, 2, "the nvml-only Xid 13 is not a kernel line")
	assert.Equal(t, "4,1,35000000,-;NVRM: Xid (PCI:0000:2a:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", lines[1])
	assert.Equal(t, []string{"torch.OutOfMemoryError: CUDA out of memory."}, readLines(t, filepath.Join(dir, "app", "train.log")))

	// Next loop: everything again, kmsg sequence numbers keep counting.
	clk.Set(60*time.Second + 59*time.Second)
	require.NoError(t, sim.Flush())
	lines = readLines(t, kmsg)
	require.Len(t, lines, 4)
	assert.True(t, strings.HasPrefix(lines[2], "4,2,90000000,-;"), lines[2])
	assert.Len(t, readLines(t, filepath.Join(dir, "app", "train.log")), 2)
}

func TestLogLinesNeedALogDir(t *testing.T) {
	dir := t.TempDir()
	sim, clk := newTestSim(t, parse(t, fileScenario), Options{KmsgPath: filepath.Join(dir, "kmsg"), FlushInterval: time.Hour})
	require.NoError(t, sim.Start())
	defer sim.Stop()
	clk.Set(59 * time.Second)
	require.NoError(t, sim.Flush())
	_, err := os.Stat(filepath.Join(dir, "app", "train.log"))
	assert.True(t, os.IsNotExist(err))
}

func TestStartWithoutFilesIsANoOp(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, fileScenario), Options{})
	require.NoError(t, sim.Start())
	require.NoError(t, sim.Flush())
	sim.Stop()
	sim.Stop() // safe twice, and without Start
}

func TestWriterGoroutine(t *testing.T) {
	// Wall clock: an event 50 ms in is written by the goroutine alone. Scenario time starts
	// a second from now, so a slow machine cannot get to Start after the event is due (a
	// record due before Start is skipped).
	dir := t.TempDir()
	kmsg := filepath.Join(dir, "kmsg")
	s := parse(t, "gpus: [{}]\nevents: [{at: 50ms, gpu: 0, xid: 94}]")
	sim, err := New(s, Options{KmsgPath: kmsg, FlushInterval: 10 * time.Millisecond, Start: time.Now().Add(time.Second)})
	require.NoError(t, err)
	require.NoError(t, sim.Start())
	assert.Error(t, sim.Start(), "a second Start is refused")
	assert.Eventually(t, func() bool {
		b, _ := os.ReadFile(kmsg)
		return strings.Contains(string(b), "): 94, ")
	}, 5*time.Second, 10*time.Millisecond)
	sim.Stop()
	require.NoError(t, sim.Start(), "restart after Stop")
	sim.Stop()
}

func TestWriterReportsErrors(t *testing.T) {
	dir := t.TempDir()
	kmsg := filepath.Join(dir, "kmsg")
	sim, clk := newTestSim(t, parse(t, fileScenario), Options{KmsgPath: kmsg, FlushInterval: time.Hour})
	require.NoError(t, sim.Start())
	defer sim.Stop()
	require.NoError(t, os.Remove(kmsg))
	require.NoError(t, os.Mkdir(kmsg, 0o755)) // now a directory: appends fail
	clk.Set(59 * time.Second)
	assert.ErrorContains(t, sim.Flush(), "append to "+kmsg)
}

func TestScenarioKmsgFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(path, []byte("kmsg_file: out/kmsg\ngpus: [{}]\nevents: [{at: 1s, gpu: 0, xid: 31}]"), 0o644))
	s, err := LoadScenario(path)
	require.NoError(t, err)
	sim, clk := newTestSim(t, s, Options{FlushInterval: time.Hour})
	require.NoError(t, sim.Start())
	defer sim.Stop()
	clk.Set(2 * time.Second)
	require.NoError(t, sim.Flush())
	assert.Len(t, readLines(t, filepath.Join(dir, "out", "kmsg")), 1)
}

func TestXidText(t *testing.T) {
	pci := pciAddr{bus: 0x3b}
	assert.Equal(t, "NVRM: Xid (PCI:0000:3b:00): 45, pid=7, name=<unknown>", xidText(Event{Xid: 45, PID: 7}, pci))
	assert.Contains(t, xidText(Event{Xid: 31, PID: 7, Name: "python3"}, pci), "): 31, pid=7, name=python3, Ch 00000008, intr 00000000. MMU Fault")
}

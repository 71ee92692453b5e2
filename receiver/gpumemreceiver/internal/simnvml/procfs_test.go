package simnvml

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/receiver/gpumemreceiver/internal/procfs"
)

const procScenario = `
duration: 60s
gpus:
  - processes:
      - {pid: 100, name: a-very-long-process-name, container_id: 3f9a1e0c2b7d4c5e8a6f1b2d3c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a,
         pod_uid: 6b0e7c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c, vpid: 7, memory: 1GiB}
      - {pid: 200, name: worker, container_id: 3f9a1e0c2b7d4c5e8a6f1b2d3c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a, memory: 1GiB, start: 10s, stop: 20s}
      - {pid: 300, name: host, exe: "-", memory: 1GiB}
      - {pid: 400, name: literal, exe: "/opt/bin/server (deleted)", cgroup: "0::/system.slice/crio-0000000000000000000000000000000000000000000000000000000000000001.scope", memory: 1GiB}
  - processes:
      - {pid: 200, name: worker, container_id: 3f9a1e0c2b7d4c5e8a6f1b2d3c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a, memory: 1GiB, start: 30s, stop: 40s}
`

func TestProcFSFollowsTheClock(t *testing.T) {
	sim, clk := newTestSim(t, parse(t, procScenario), Options{})
	pfs := sim.ProcFS()
	r := procfs.New(pfs)

	info, err := r.Lookup(100)
	require.NoError(t, err)
	assert.Equal(t, procfs.Info{
		ExecutableName: "a-very-long-process-name", // from the exe link, whole
		Comm:           "a-very-long-pro",          // the kernel keeps 15 bytes
		ContainerID:    "3f9a1e0c2b7d4c5e8a6f1b2d3c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a",
		PodUID:         "6b0e7c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c",
		VPID:           7,
	}, info)

	info, err = r.Lookup(300)
	require.NoError(t, err)
	assert.Equal(t, procfs.Info{ExecutableName: "host", Comm: "host", VPID: 300}, info, "exe unreadable: comm")

	info, err = r.Lookup(400)
	require.NoError(t, err)
	assert.Equal(t, "0000000000000000000000000000000000000000000000000000000000000001", info.ContainerID)
	assert.Equal(t, "server", info.ExecutableName)

	_, err = r.Lookup(200)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "pid 200 has not started")

	clk.Set(15 * time.Second)
	info, err = r.Lookup(200)
	require.NoError(t, err)
	assert.Equal(t, "worker", info.Comm)

	clk.Set(25 * time.Second)
	_, err = fs.ReadFile(pfs, "200/comm")
	assert.True(t, errors.Is(err, fs.ErrNotExist), "exited")
	clk.Set(35 * time.Second)
	_, err = fs.ReadFile(pfs, "200/comm")
	assert.NoError(t, err, "alive again, on the other GPU")

	entries, err := fs.ReadDir(pfs, ".")
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"100", "200", "300", "400"}, names)

	_, err = pfs.Open("../etc/passwd")
	assert.True(t, errors.Is(err, fs.ErrInvalid))
	_, err = pfs.Open("100/cmdline")
	assert.True(t, errors.Is(err, fs.ErrNotExist), "no cmdline: the receiver must not read it")
}

func TestProcFSConforms(t *testing.T) {
	sim, _ := newTestSim(t, parse(t, procScenario), Options{})
	require.NoError(t, fstest.TestFS(sim.ProcFS(), "100/comm", "100/cgroup", "100/status", "300/comm"))
}

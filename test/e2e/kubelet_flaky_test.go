//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
	"github.com/gpumem/otelcol-gpumem/internal/simkubelet"
)

const flakyKubeletConfig = `
receivers:
  gpu_mem:
    collection_interval: 1s
    backend: simulated
    simulated:
      scenario: %s
    xid:
      nvml_events: false
      kmsg_path: ""
    kubernetes:
      pod_resources_socket: %s
      pod_logs_dir: ""
      refresh_interval: 1s
exporters:
  file:
    path: {{DIR}}/metrics.jsonl
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [gpu_mem]
      exporters: [file]
`

// rawSocket listens on path and hands every connection to serve: a kubelet that hangs or
// answers garbage. close stops it and waits for its connections.
func rawSocket(t *testing.T, path string, serve func(net.Conn)) (close func()) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); serve(c) }()
		}
	}()
	return func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

// TestKubeletFlaky: the built binary against a PodResources socket that hangs, answers
// garbage, and is deleted and recreated logs at most 2 lines per phase (the WARN going
// into it, the INFO coming out), keeps scraping, reports the last good answer's age, and
// a List of 50,000 pods adds no more points than the node's GPUs can hold.
func TestKubeletFlaky(t *testing.T) {
	t.Parallel()
	scenario := testdata(t, "scenarios", "kubernetes", "four_pods.yaml")
	sockDir, err := os.MkdirTemp("", "kubelet")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	socket := filepath.Join(sockDir, "kubelet.sock")
	local := scenarioPods(t, scenario)
	srv := simkubelet.New(simkubelet.Options{})
	srv.SetPods(local)
	require.NoError(t, srv.Start(socket))
	t.Cleanup(srv.Stop)

	c := startCollector(t, fmt.Sprintf(flakyKubeletConfig, scenario, socket))
	path := filepath.Join(c.dir, "metrics.jsonl")
	allocationsAt := func() map[int64]int {
		out := map[int64]int{}
		for _, p := range metricPoints(t, path) {
			if p.Metric == "nvidia.gpu.allocation" {
				out[p.Time.UnixNano()]++
			}
		}
		return out
	}
	e2eharness.WaitFor(t, 30*time.Second, c, "allocations", func() bool { return len(allocationsAt()) > 0 })
	healthy := 0
	for _, n := range allocationsAt() {
		healthy = max(healthy, n)
	}
	require.Positive(t, healthy)

	lines := func() []string {
		var out []string
		for _, l := range strings.Split(c.Output(), "\n") {
			if strings.TrimSpace(l) != "" {
				out = append(out, l)
			}
		}
		return out
	}
	phase := func(name string, hold time.Duration, begin, end func()) {
		before := len(lines())
		begin()
		time.Sleep(hold)
		end()
		time.Sleep(3 * time.Second) // refreshes of the recovered kubelet
		got := lines()[before:]
		t.Logf("phase %s: %d log lines", name, len(got))
		for _, l := range got {
			t.Logf("  %s", l)
		}
		assert.LessOrEqual(t, len(got), 2, "phase %s: one line going in, one coming out", name)
	}

	var stop func()
	phase("hang", 8*time.Second, func() {
		srv.Stop()
		stop = rawSocket(t, socket, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }) // reads, never answers
	}, func() {
		stop()
		require.NoError(t, srv.Start(socket))
	})
	phase("garbage", 8*time.Second, func() {
		srv.Stop()
		stop = rawSocket(t, socket, func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 500 not a kubelet\r\n\r\n\x00\x01\x02garbage"))
			_ = c.Close()
		})
	}, func() {
		stop()
		require.NoError(t, srv.Start(socket))
	})
	phase("socket deleted and recreated", 8*time.Second, func() {
		srv.Stop()
		_ = os.Remove(socket)
	}, func() {
		require.NoError(t, srv.Start(socket))
	})
	if os.Geteuid() == 0 {
		t.Log("phase permission denied: not run as root, whom a socket's mode does not stop")
	} else {
		phase("permission denied", 8*time.Second, func() {
			require.NoError(t, os.Chmod(socket, 0))
		}, func() {
			require.NoError(t, os.Chmod(socket, 0o660))
		})
	}

	// Every call is bounded by its timeout: the scrapes kept their interval through the
	// phases (a List that hangs costs one scrape at most the 2 s call timeout).
	var times []time.Time
	for _, p := range metricPoints(t, path) {
		if p.Metric == "hw.gpu.memory.limit" && p.Resource["nvidia.gpu.index"] == int64(0) {
			times = append(times, p.Time)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	gap := time.Duration(0)
	for i := 1; i < len(times); i++ {
		gap = max(gap, times[i].Sub(times[i-1]))
	}
	t.Logf("longest time between two scrapes: %s", gap)
	assert.Less(t, gap, 3500*time.Millisecond, "scrapes keep their interval")

	// The last good answer's age grew through the outages and is back under the refresh
	// interval (and a scrape) now that the kubelet answers.
	var last point
	oldest := 0.0
	for _, p := range metricPoints(t, path) {
		if p.Metric == "nvidia.gpu.allocation.age" {
			oldest = max(oldest, p.Value)
			if !p.Time.Before(last.Time) {
				last = p
			}
		}
	}
	assert.GreaterOrEqual(t, oldest, 6.0, "the age grows while the kubelet fails")
	assert.LessOrEqual(t, last.Value, 2.5, "and is fresh again once it answers")

	// 50,000 pods besides the scenario's: half on GPUs of other nodes, half naming "replicas"
	// of one of this node's GPUs, far more than any device plugin makes.
	gpu, _, _ := strings.Cut(local[0].Containers[0].Devices[0].IDs[0], "::")
	many := append([]simkubelet.Pod{}, local...)
	for i := range 50000 {
		id := fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", i, i)
		if i%2 == 0 {
			id = fmt.Sprintf("%s::%d", gpu, i)
		}
		many = append(many, simkubelet.Pod{Namespace: "batch", Name: fmt.Sprintf("job-%05d", i), Containers: []simkubelet.Container{{
			Name:    "main",
			Devices: []simkubelet.Devices{{Resource: "nvidia.com/gpu", IDs: []string{id}}},
		}}})
	}
	srv.SetPods(many)
	from := time.Now()
	time.Sleep(5 * time.Second)
	c.stop(t)
	most := 0
	for at, n := range allocationsAt() {
		if time.Unix(0, at).After(from.Add(2 * time.Second)) {
			most = max(most, n)
		}
	}
	t.Logf("allocation points per scrape: %d healthy, at most %d with 50,000 pods listed", healthy, most)
	assert.Positive(t, most, "the 50,000-pod List was read")
	// One GPU's allocations are bounded (podresources.MaxDeviceAllocations); the other
	// nodes' GPUs add none.
	assert.LessOrEqual(t, most, healthy+128, "no more points than the node's GPUs can hold")
}

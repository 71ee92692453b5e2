package simnvml

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const podScenario = `
gpus:
  - uuid: GPU-aaaaaaaa-0000-4000-8000-000000000000
  - uuid: GPU-bbbbbbbb-0000-4000-8000-000000000000
pods:
  - uid: 0f8dee9c-6946-47f6-a7f4-2572d75c2f6e
    name: trainer-x2k9q
    namespace: ml
    containers:
      - name: trainer
        id: dcfb23041a04885120745a76fe0e078aeb5946db7bfbddac6f4b6ee386990c89
        devices: [{ids: [GPU-bbbbbbbb-0000-4000-8000-000000000000]}]
      - name: sidecar
  - uid: ed9688d2-942e-4a2c-a266-2a25de60387c
    name: serve-0
    containers:
      - name: server
        devices: [{resource: nvidia.com/gpu.shared, ids: ["GPU-aaaaaaaa-0000-4000-8000-000000000000::1"]}]
log_lines:
  - {at: 1s, path: pods/ml_trainer-x2k9q_0f8dee9c-6946-47f6-a7f4-2572d75c2f6e/trainer/0.log, format: cri, line: "torch.OutOfMemoryError: CUDA out of memory."}
  - {at: 1s, path: docker/c.log, format: docker, line: "a \"quoted\" line"}
`

func TestScenarioPods(t *testing.T) {
	s := parse(t, podScenario)
	require.Len(t, s.Pods, 2)
	assert.Equal(t, "default", s.Pods[1].Namespace, "namespace defaults as kubectl's does")
	assert.Equal(t, DefaultPodResource, s.Pods[0].Containers[0].Devices[0].Resource)
	assert.Equal(t, "nvidia.com/gpu.shared", s.Pods[1].Containers[0].Devices[0].Resource)

	for name, bad := range map[string]string{
		"unknown device": `{gpus: [{}], pods: [{uid: u, name: p, containers: [{name: c, devices: [{ids: [GPU-nope]}]}]}]}`,
		"no uid":         `{gpus: [{}], pods: [{name: p, containers: [{name: c}]}]}`,
		"no container":   `{gpus: [{}], pods: [{uid: u, name: p}]}`,
		"duplicate uid":  `{gpus: [{}], pods: [{uid: u, name: p, containers: [{name: c}]}, {uid: u, name: q, containers: [{name: c}]}]}`,
		"bad format":     `{gpus: [{}], log_lines: [{at: 0s, path: a.log, line: x, format: syslog}]}`,
	} {
		_, err := ParseScenario([]byte(bad), "")
		assert.Error(t, err, name)
	}
}

func TestPodLogsLayoutAndRuntimeFormats(t *testing.T) {
	dir := t.TempDir()
	podLogs := filepath.Join(dir, "pods")
	sim, clk := newTestSim(t, parse(t, podScenario), Options{LogDir: dir, PodLogsDir: podLogs, FlushInterval: time.Hour})
	require.NoError(t, sim.Start())
	defer sim.Stop()

	info, err := os.Stat(filepath.Join(podLogs, "ml_trainer-x2k9q_0f8dee9c-6946-47f6-a7f4-2572d75c2f6e", "sidecar"))
	require.NoError(t, err)
	assert.True(t, info.IsDir())
	link := filepath.Join(dir, "containers", "trainer-x2k9q_ml_trainer-dcfb23041a04885120745a76fe0e078aeb5946db7bfbddac6f4b6ee386990c89.log")
	target, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(podLogs, "ml_trainer-x2k9q_0f8dee9c-6946-47f6-a7f4-2572d75c2f6e", "trainer", "0.log"), target)

	clk.Set(2 * time.Second)
	require.NoError(t, sim.Flush())
	stamp := epoch.Add(time.Second).UTC().Format(time.RFC3339Nano)
	assert.Equal(t, []string{stamp + " stderr F torch.OutOfMemoryError: CUDA out of memory."},
		readLines(t, target), "CRI: stamped when written, stderr, full line")

	var entry map[string]string
	require.NoError(t, json.Unmarshal([]byte(readLines(t, filepath.Join(dir, "docker", "c.log"))[0]), &entry))
	assert.Equal(t, map[string]string{"log": "a \"quoted\" line\n", "stream": "stderr", "time": stamp}, entry)
}

func TestKubeletPods(t *testing.T) {
	pods := parse(t, podScenario).KubeletPods()
	require.Len(t, pods, 2)
	assert.Equal(t, "ml", pods[0].Namespace)
	assert.Equal(t, "trainer-x2k9q", pods[0].Name)
	require.Len(t, pods[0].Containers, 2)
	assert.Equal(t, "nvidia.com/gpu", pods[0].Containers[0].Devices[0].Resource)
	assert.Equal(t, []string{"GPU-bbbbbbbb-0000-4000-8000-000000000000"}, pods[0].Containers[0].Devices[0].IDs)
	assert.Empty(t, pods[0].Containers[1].Devices)
	assert.Equal(t, "default", pods[1].Namespace)
}

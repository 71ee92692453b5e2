//go:build e2e

package e2e

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// TestGateway runs two node agents and one gateway. Both nodes' failing process is pid 4242
// on a GPU with index 0, so only host.name tells the gateway which node's metrics explain
// which OOM: node-a's is another tenant, node-b's a zombie context.
func TestGateway(t *testing.T) {
	t.Parallel()
	port := e2eharness.FreePort(t)
	gw := startCollector(t, gatewayConfig(t, port))
	// The agents' exporters back off for seconds after a refused connection: start them once
	// the gateway listens.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	e2eharness.WaitFor(t, 60*time.Second, gw, "the gateway's OTLP listener", func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		_ = conn.Close()
		return true
	})

	nodes := []struct {
		host, scenario, cause, hwID, otherGPU string
	}{
		{"node-a", "other_tenant", "other_tenant", "GPU-1d6a9e37-52cb-4f80-a3e4-97b2c5d8e016", "GPU-b8e14f06-3c27-4d9a-8e51-6a0f2d7c9b34"},
		{"node-b", "zombie_context", "zombie_context", "GPU-b8e14f06-3c27-4d9a-8e51-6a0f2d7c9b34", "GPU-1d6a9e37-52cb-4f80-a3e4-97b2c5d8e016"},
	}
	var agents []*collector
	for _, n := range nodes {
		agents = append(agents, startCollector(t, agentConfig(t, testdata(t, "scenarios", "causes", n.scenario+".yaml"), n.host, port)))
	}

	logsPath := filepath.Join(gw.dir, "logs.jsonl")
	ooms := waitForRecords(t, gw, logsPath, 90*time.Second, 2, "an OOM record from each node", isOOM)
	require.Len(t, ooms, 2)
	byHost := map[any]record{}
	for _, r := range ooms {
		byHost[r.Resource["host.name"]] = r
	}
	for _, n := range nodes {
		r, ok := byHost[n.host]
		if !assert.True(t, ok, "an OOM record from %s", n.host) {
			continue
		}
		t.Logf("%s: cause=%v hw.id=%v confidence=%v evidence: %v", n.host, r.Attrs["gpu.oom.cause"],
			r.Attrs["hw.id"], r.Attrs["gpu.oom.confidence"], r.Attrs["gpu.oom.evidence"])
		assert.Equal(t, n.cause, r.Attrs["gpu.oom.cause"], "%s classified from its own metrics", n.host)
		assert.Equal(t, n.hwID, r.Attrs["hw.id"], "%s matched to its own GPU", n.host)
		assert.NotEqual(t, n.otherGPU, r.Attrs["hw.id"])
		assert.Equal(t, "pytorch", r.Attrs["gpu.oom.framework"])
		assert.Equal(t, "high", r.Attrs["gpu.oom.confidence"], "matched by pid on its own host")
	}

	// Both nodes' metrics reached the gateway, each GPU under its own host. The agents stop
	// first, so that none is left retrying against a gateway that has gone.
	for _, a := range agents {
		a.stop(t)
	}
	gw.stop(t)
	points := metricPoints(t, filepath.Join(gw.dir, "metrics.jsonl"))
	hosts := map[any]any{}
	for _, p := range points {
		if p.Metric == "hw.gpu.memory.usage" {
			hosts[p.Resource["hw.id"]] = p.Resource["host.name"]
		}
	}
	assert.Equal(t, "node-a", hosts["GPU-1d6a9e37-52cb-4f80-a3e4-97b2c5d8e016"])
	assert.Equal(t, "node-a", hosts["GPU-9c4b7f12-a8e3-4d56-b0f9-3e2a1d6c5b87"])
	assert.Equal(t, "node-b", hosts["GPU-b8e14f06-3c27-4d9a-8e51-6a0f2d7c9b34"])
}

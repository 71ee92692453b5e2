//go:build e2e

package deploy_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/gpumem/otelcol-gpumem/internal/e2eharness"
)

// TestFleetTwoGatewayReplicas: two replicas of the shipped gateway behind one backend, as a
// Service spreads the agents' connections over a Deployment's pods. An OOM record the node's
// agent already classified passes either replica unchanged (not classified again, nothing
// added, nothing taken away), though each replica's window holds that node's GPU and would
// have named it: the record says the agent matched none. deploy/README.md, "Scaling out".
func TestFleetTwoGatewayReplicas(t *testing.T) {
	t.Parallel()
	pk := newPKI(t)
	be := newBackend()
	backendAddr := e2eharness.FreeAddr(t)
	be.serve(t, backendAddr, pk.serverTLS(t))
	replicas := []*gateway{startGateway(t, pk, backendAddr), startGateway(t, pk, backendAddr)}

	for i, gw := range replicas {
		s := dial(t, gw.grpcAddr, pk.pool, goodToken)
		// The node's metrics reach this replica too: a classifier there could match the GPU.
		require.NoError(t, s.sendMetrics(gpuMetricsOf("replica-node", 75<<30)))
		time.Sleep(500 * time.Millisecond)
		require.NoError(t, s.sendMetrics(gpuMetricsOf("replica-node", 75<<30)))

		prefix := fmt.Sprintf("replica-%d: ", i)
		ld := logsOf("replica-node", prefix+oomLine)
		a := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
		a.PutStr("gpu.oom.framework", "pytorch")
		a.PutStr("gpu.oom.cause", "fragmentation")
		a.PutStr("gpu.oom.confidence", "medium")
		a.PutStr("gpu.oom.evidence", "classified by the node's agent")
		a.PutStr("gpu.oom.recommendation", "set expandable_segments")
		a.PutStr("gpu.oom.match", "none")
		want := plog.NewLogs()
		ld.CopyTo(want)
		sent := time.Now()
		require.NoError(t, s.sendLogs(ld))

		var got plog.LogRecord
		eventually(t, 30*time.Second, "the agent's classified OOM at the backend through replica "+fmt.Sprint(i), func() bool {
			var ok bool
			got, ok = be.recordWith(prefix)
			return ok
		}, gw.proc)
		t.Logf("replica %d: forwarded in %v", i, time.Since(sent).Round(10*time.Millisecond))
		w := want.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
		assert.Equal(t, w.Attributes().AsRaw(), got.Attributes().AsRaw(), "replica %d changed the agent's classification", i)
		assert.Equal(t, w.Body().AsString(), got.Body().AsString())
	}
}

package deploy_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// halfOpenLimit: a connection that has not finished its TLS handshake and request headers, or
// carries no request, is closed within this (deploy/README.md, "Protecting the gateway"); the
// gRPC handshake by preauth's handshake_timeout (TestGatewayPreauth).
const halfOpenLimit = 30 * time.Second

// The gateway's receivers bound what a sender, authenticated or not, can hold: every value
// deploy/README.md documents is set, and every timeout is within halfOpenLimit.
func TestGatewayConnectionBounds(t *testing.T) {
	p := gatewayPod(t)
	grpc := mapAt(p.config, "receivers", "otlp", "protocols", "grpc")
	http := mapAt(p.config, "receivers", "otlp", "protocols", "http")
	require.NotNil(t, grpc)
	require.NotNil(t, http)

	within := func(v any, what string) time.Duration {
		s, _ := v.(string)
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "%s must be set", what)
		assert.Positive(t, d, what)
		return d
	}
	// gRPC: streams per connection at least the agents' num_consumers, and few.
	streams, _ := grpc["max_concurrent_streams"].(int)
	consumers, _ := get(agentPods(t)[0].config, "exporters", "otlp_grpc", "sending_queue", "num_consumers").(int)
	assert.True(t, streams >= consumers && streams <= 8, "max_concurrent_streams %d: >= the agents' num_consumers (%d), <= 8", streams, consumers)
	assert.Equal(t, receiverLimit, grpc["max_recv_msg_size_mib"])
	// configgrpc has no max header list size: grpc-go reads up to 16 MiB of headers per
	// stream before the token is checked unless preauth, the receiver's middleware, bounds them.
	headers, _ := get(p.config, "extensions", "preauth", "max_header_list_size").(int)
	assert.True(t, headers >= 1024 && headers <= 16<<10,
		"preauth max_header_list_size %d: the gateway's gRPC header list is bounded to a few KiB (deploy/README.md)", headers)
	sp := mapAt(grpc, "keepalive", "server_parameters")
	assert.LessOrEqual(t, within(sp["max_connection_idle"], "grpc max_connection_idle"), halfOpenLimit)
	assert.LessOrEqual(t, within(sp["time"], "grpc keepalive time")+within(sp["timeout"], "grpc keepalive timeout"), time.Minute,
		"a silent peer is dropped within a minute")
	age := within(sp["max_connection_age"], "grpc max_connection_age")
	assert.Greater(t, age, within(sp["max_connection_age_grace"], "grpc max_connection_age_grace"))

	// HTTP: handshake and headers (the handshake is bounded by the smallest timeout), the
	// whole request, the idle time between requests.
	assert.LessOrEqual(t, within(http["read_header_timeout"], "http read_header_timeout"), halfOpenLimit)
	assert.LessOrEqual(t, within(http["read_timeout"], "http read_timeout"), halfOpenLimit)
	assert.LessOrEqual(t, within(http["write_timeout"], "http write_timeout"), halfOpenLimit)
	assert.LessOrEqual(t, within(get(http, "keepalive", "idle_timeout"), "http keepalive idle_timeout"), halfOpenLimit)
	assert.Equal(t, receiverLimit<<20, http["max_request_body_size"])
}

// decodedPerRequest is what one request in flight may hold in the gateway: its body at the
// receivers' size limit and its decoded form, about three times as large (measured: 13-15 MiB
// for a 3.6 MiB logs request; deploy/README.md, "Protecting the gateway").
const decodedPerRequest = 4 * receiverLimit << 20

// However many senders connect, the requests in flight are bounded on each listener
// (preauth's max_in_flight_requests on both the gRPC and the HTTP receiver), and what they can
// hold, with the classifier's window and its GC headroom, stays under memory_limiter's soft
// limit of the container's memory limit: the gateway refuses (retryably) before it runs out.
func TestGatewayInFlightFitsMemoryLimit(t *testing.T) {
	p := gatewayPod(t)
	var inFlight int64
	for _, proto := range []string{"grpc", "http"} {
		r := mapAt(p.config, "receivers", "otlp", "protocols", proto)
		require.NotNil(t, r, proto)
		var ids []string
		for _, m := range listAt(r, "middlewares") {
			ids = append(ids, str(m, "id"))
		}
		i := slices.IndexFunc(ids, func(id string) bool { return typeOf(id) == "preauth" })
		require.GreaterOrEqual(t, i, 0, "%s: the %s receiver's middlewares include preauth: %v", p.source, proto, ids)
		n, _ := get(p.config, "extensions", ids[i], "max_in_flight_requests").(int)
		require.Positive(t, n, "%s: %s.max_in_flight_requests bounds the %s listener", p.source, ids[i], proto)
		consumers, _ := get(agentPods(t)[0].config, "exporters", "otlp_grpc", "sending_queue", "num_consumers").(int)
		assert.GreaterOrEqual(t, n, 4*consumers, "%s: room for several agents sending at once", proto)
		inFlight += int64(n)
	}
	limit, err := bytesOf(str(p.container, "resources", "limits", "memory"))
	require.NoError(t, err)
	ml := mapAt(p.config, "processors", "memory_limiter")
	hard, _ := ml["limit_percentage"].(int)
	spike, _ := ml["spike_limit_percentage"].(int)
	soft := limit * int64(hard-spike) / 100
	window, _ := get(p.config, "processors", "oom_classifier", "max_bytes").(int)
	held := inFlight*decodedPerRequest + 2*int64(window)
	assert.LessOrEqual(t, held, soft,
		"requests in flight (%d × %d MiB) and the window (2 × %d MiB) must fit under memory_limiter's soft limit (%d MiB)",
		inFlight, decodedPerRequest>>20, window>>20, soft>>20)
}

// deploy/README.md's sizing states the shipped gateway's caps and memory limit: they are the
// gateway's own, and its window holds 1,000 nodes of 16 devices at the measured 25,249 bytes a
// device (BenchmarkFleetWindow) within both caps.
func TestSizingTableMatchesGateway(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	p := gatewayPod(t)
	oc := mapAt(p.config, "processors", "oom_classifier")
	maxGPUs, _ := oc["max_gpus"].(int)
	maxBytes, _ := oc["max_bytes"].(int)
	limit := str(p.container, "resources", "limits", "memory")
	gomem, _ := p.envValue("GOMEMLIMIT")
	for _, want := range []string{
		fmt.Sprintf("`max_gpus: %d`", maxGPUs), fmt.Sprintf("`max_bytes: %d`", maxBytes),
		"a " + strings.TrimSuffix(limit, "Gi") + " Gi memory limit", "`GOMEMLIMIT: " + gomem + "`",
	} {
		assert.True(t, strings.Contains(string(readme), want), "deploy/README.md's sizing names the shipped gateway's %s", want)
	}
	const nodes, devicesPerNode, bytesPerDevice = 1000, 16, 25249
	assert.GreaterOrEqual(t, maxGPUs, nodes*devicesPerNode, "max_gpus holds 1,000 nodes of 16 devices")
	assert.GreaterOrEqual(t, int64(maxBytes), int64(nodes*devicesPerNode*bytesPerDevice), "max_bytes holds their windows")
}

package deploy_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gateway's gRPC receiver checks the token before it reads a request and bounds the
// handshake: its middlewares list preauth, which names the receiver's own authenticator, is
// enabled after it (the collector orders them by Dependencies anyway), and closes a
// half-finished handshake within halfOpenLimit (deploy/README.md, "Protecting the gateway").
func TestGatewayPreauth(t *testing.T) {
	p := gatewayPod(t)
	grpc := mapAt(p.config, "receivers", "otlp", "protocols", "grpc")
	require.NotNil(t, grpc)
	var ids []string
	for _, m := range listAt(grpc, "middlewares") {
		ids = append(ids, str(m, "id"))
	}
	i := slices.IndexFunc(ids, func(id string) bool { return typeOf(id) == "preauth" })
	require.GreaterOrEqual(t, i, 0, "%s: the gRPC receiver's middlewares include preauth: %v", p.source, ids)
	id := ids[i]
	assert.Contains(t, strs(p.config, "service", "extensions"), id, "%s: %s is not enabled", p.source, id)
	ext := mapAt(p.config, "extensions", id)
	require.NotNil(t, ext, "%s: extension %s", p.source, id)
	assert.Equal(t, str(grpc, "auth", "authenticator"), str(ext, "authenticator"), "%s: %s checks the token the receiver's auth checks", p.source, id)
	d, err := time.ParseDuration(str(ext, "handshake_timeout"))
	require.NoError(t, err, "%s: %s.handshake_timeout is set", p.source, id)
	assert.True(t, d > 0 && d <= halfOpenLimit, "%s: %s.handshake_timeout %v within %v", p.source, id, d, halfOpenLimit)
}

// Every agent (ConfigMap and Helm values) keeps a batch the gateway refuses for its token: its
// exporters list an enabled auth_retry middleware, and retry without a deadline from a durable
// queue (TestDurableQueues), so a rotation done in the wrong order delays data and loses none
// (deploy/README.md, "Rotating without dropping data").
func TestAgentsKeepRefusedBatches(t *testing.T) {
	for _, p := range agentPods(t) {
		for id, e := range mapAt(p.config, "exporters") {
			if get(e, "auth") == nil {
				continue
			}
			var mw []string
			for _, m := range listAt(e, "middlewares") {
				mw = append(mw, str(m, "id"))
			}
			i := slices.IndexFunc(mw, func(id string) bool { return typeOf(id) == "auth_retry" })
			if !assert.GreaterOrEqual(t, i, 0, "%s: %s authenticates and must list auth_retry in middlewares: %v", p.source, id, mw) {
				continue
			}
			assert.Contains(t, strs(p.config, "service", "extensions"), mw[i], "%s: %s is not enabled", p.source, mw[i])
			assert.NotNil(t, get(p.config, "extensions", mw[i]), "%s: extension %s", p.source, mw[i])
			assert.Equal(t, 0, get(e, "retry_on_failure", "max_elapsed_time"), "%s: %s retries until the gateway accepts the token", p.source, id)
		}
	}
}

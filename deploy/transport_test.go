package deploy_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The invariants of the secured, durable path (deploy/README.md, "Securing and sizing the
// gateway"): TLS and a token between agents and gateway, credentials from read-only Secrets,
// disk-backed sending queues, bounded receivers.

const (
	gatewayName   = "otelcol-gpumem-gateway"
	agentName     = "otelcol-gpumem-agent"
	tokenSecret   = "otelcol-gpumem-token"
	gatewayTLS    = "otelcol-gpumem-gateway-tls"
	agentTLS      = "otelcol-gpumem-agent-tls"
	certMgrFile   = "kubernetes/cert-manager/certificates.yaml"
	receiverLimit = 4 // MiB, the gateway's max_recv_msg_size_mib
)

func gatewayPod(t *testing.T) pod {
	t.Helper()
	ms := loadManifests(t)
	return podOf(t, ms, find(t, ms, "Deployment", gatewayName))
}

// under reports whether path lies in dir (or is dir).
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// storageDirs lists the directory of every file storage extension of a configuration.
func storageDirs(cfg map[string]any) []string {
	var out []string
	for id, ext := range mapAt(cfg, "extensions") {
		if typeOf(id) == "file_storage" || typeOf(id) == "safe_file_storage" {
			out = append(out, str(ext, "directory"))
		}
	}
	return out
}

// typeOf is the component type of an id such as "file_storage/queue".
func typeOf(id string) string { typ, _, _ := strings.Cut(id, "/"); return typ }

// mountOf returns the container's mount whose path holds file, and its volume.
func (p pod) mountOf(file string) (mount, volume map[string]any) {
	for _, m := range maps(listAt(p.container, "volumeMounts")) {
		if under(file, str(m, "mountPath")) {
			return m, byName(listAt(p.spec, "volumes"), str(m, "name"))
		}
	}
	return nil, nil
}

// secretOf returns the name of the Secret mounted read-only where file lies, or fails.
func secretOf(t *testing.T, p pod, file string) string {
	t.Helper()
	m, v := p.mountOf(file)
	require.NotNil(t, m, "%s: %s is on no volume", p.source, file)
	name := str(v, "secret", "secretName")
	require.NotEmpty(t, name, "%s: %s must come from a Secret", p.source, file)
	assert.Equal(t, true, m["readOnly"], "%s: Secret %s must be mounted readOnly", p.source, name)
	return name
}

// tokenFile returns the filename of the bearertokenauth extension an auth block names, after
// checking that the extension exists and is enabled.
func tokenFile(t *testing.T, p pod, auth map[string]any, where string) string {
	t.Helper()
	id := str(auth, "authenticator")
	require.Equal(t, "bearertokenauth", typeOf(id), "%s: %s: auth.authenticator", p.source, where)
	assert.Contains(t, strs(p.config, "service", "extensions"), id, "%s: %s is not enabled", p.source, id)
	ext := mapAt(p.config, "extensions", id)
	assert.Empty(t, ext["token"], "%s: %s: no inline token, read it from a Secret", p.source, id)
	assert.Empty(t, ext["tokens"], "%s: %s: no inline tokens, read them from a Secret", p.source, id)
	f := str(ext, "filename")
	require.NotEmpty(t, f, "%s: %s.filename", p.source, id)
	return f
}

// No shipped configuration turns TLS off or skips verification, in the parsed configs and
// anywhere in the text of a file under deploy/ (a commented example included).
func TestNoInsecureTLS(t *testing.T) {
	for _, p := range allPods(t) {
		walk(p.config, "", func(path string, v any) {
			last := path[strings.LastIndexByte(path, '.')+1:]
			if last == "insecure" || last == "insecure_skip_verify" {
				assert.Equal(t, false, v, "%s: %s must not be set (nor come from an env var)", p.source, path)
			}
		})
	}
	files, err := filepath.Glob("*/*.yaml")
	require.NoError(t, err)
	more, err := filepath.Glob("*/*/*.yaml")
	require.NoError(t, err)
	for _, f := range append(files, more...) {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		for n := 1; sc.Scan(); n++ {
			line := strings.ReplaceAll(sc.Text(), " ", "")
			assert.NotContains(t, line, "insecure:true", "%s:%d", f, n)
			assert.NotContains(t, line, "insecure_skip_verify:true", "%s:%d", f, n)
		}
		require.NoError(t, sc.Err())
		fh.Close()
	}
}

// walk calls fn with the dotted path of every scalar in v.
func walk(v any, path string, fn func(string, any)) {
	switch tv := v.(type) {
	case map[string]any:
		for k, e := range tv {
			walk(e, path+"."+k, fn)
		}
	case []any:
		for _, e := range tv {
			walk(e, path, fn)
		}
	default:
		fn(path, v)
	}
}

// Each protocol of the gateway's OTLP receiver serves TLS from the gateway's Secret, requires
// a bearer token from the token Secret, and bounds what one request may carry.
func TestGatewayRequiresTLSAndToken(t *testing.T) {
	p := gatewayPod(t)
	receivers := mapAt(p.config, "receivers")
	require.NotEmpty(t, receivers)
	for id, r := range receivers {
		require.Equal(t, "otlp", typeOf(id), "the gateway receives OTLP only")
		protocols := mapAt(r, "protocols")
		require.NotEmpty(t, protocols, id)
		for name, proto := range protocols {
			where := id + ".protocols." + name
			for _, key := range []string{"cert_file", "key_file"} {
				f := str(proto, "tls", key)
				require.NotEmpty(t, f, "%s.tls.%s", where, key)
				assert.Equal(t, gatewayTLS, secretOf(t, p, f), "%s.tls.%s", where, key)
			}
			assert.Equal(t, tokenSecret, secretOf(t, p, tokenFile(t, p, mapAt(proto, "auth"), where)), "%s: token", where)
			switch name {
			case "grpc":
				assert.Equal(t, receiverLimit, get(proto, "max_recv_msg_size_mib"), "%s.max_recv_msg_size_mib", where)
			case "http":
				assert.Equal(t, receiverLimit<<20, get(proto, "max_request_body_size"), "%s.max_request_body_size", where)
			default:
				t.Errorf("%s: unexpected protocol", where)
			}
		}
	}
}

// Every agent verifies the gateway against a CA from its own Secret, presents the token the
// gateway checks, and never sends a request the gateway's size limit refuses.
func TestAgentsPresentCredentials(t *testing.T) {
	for _, p := range agentPods(t) {
		exps := mapAt(p.config, "exporters")
		require.Len(t, exps, 1, p.source)
		for id, e := range exps {
			require.Equal(t, "otlp_grpc", typeOf(id), p.source)
			assert.Equal(t, agentTLS, secretOf(t, p, str(e, "tls", "ca_file")), "%s: %s.tls.ca_file", p.source, id)
			assert.Equal(t, tokenSecret, secretOf(t, p, tokenFile(t, p, mapAt(e, "auth"), id)), "%s: %s token", p.source, id)
			assert.Equal(t, "bytes", str(e, "sending_queue", "batch", "sizer"), "%s: batches bounded in bytes", p.source)
			maxBatch, ok := get(e, "sending_queue", "batch", "max_size").(int)
			require.True(t, ok, "%s: sending_queue.batch.max_size", p.source)
			assert.Less(t, maxBatch, receiverLimit<<20, "%s: a batch must fit the gateway's max_recv_msg_size_mib", p.source)
		}
	}
}

// Every Secret volume is mounted read-only and readable by owner and group only.
func TestSecretsMountedReadOnly(t *testing.T) {
	for _, p := range allPods(t) {
		var secrets int
		for _, v := range p.volumes {
			if v["secret"] == nil {
				continue
			}
			secrets++
			m := byName(listAt(p.container, "volumeMounts"), str(v, "name"))
			require.NotNil(t, m, "%s: Secret volume %s is not mounted", p.source, v["name"])
			assert.Equal(t, true, m["readOnly"], "%s: Secret volume %s must be readOnly", p.source, v["name"])
			mode, ok := get(v, "secret", "defaultMode").(int)
			assert.True(t, ok && mode&0o007 == 0, "%s: Secret volume %s: defaultMode must deny others, got %o", p.source, v["name"], mode)
		}
		assert.Equal(t, 2, secrets, "%s: the TLS and the token Secret", p.source)
	}
}

// Every exporter's sending queue is on disk (a safe_file_storage extension on a writable
// volume that outlives the container), retries without a deadline, and no pipeline holds data
// in a batch processor before it. Every storage extension recovers from a damaged database
// (safe_file_storage's check, contrib's recreate behind it) instead of crash-looping on it.
func TestDurableQueues(t *testing.T) {
	for _, p := range allPods(t) {
		for id, ext := range mapAt(p.config, "extensions") {
			if strings.HasSuffix(typeOf(id), "storage") {
				assert.Equal(t, "safe_file_storage", typeOf(id), "%s: %s: a damaged database must not stop the collector", p.source, id)
				assert.Equal(t, true, get(ext, "recreate"), "%s: %s.recreate", p.source, id)
			}
		}
		for id, e := range mapAt(p.config, "exporters") {
			q := mapAt(e, "sending_queue")
			assert.Equal(t, true, q["enabled"], "%s: %s.sending_queue.enabled", p.source, id)
			st := str(q, "storage")
			assert.Equal(t, "safe_file_storage", typeOf(st), "%s: %s.sending_queue.storage", p.source, id)
			assert.Contains(t, strs(p.config, "service", "extensions"), st, "%s: %s is not enabled", p.source, st)
			dir := str(p.config, "extensions", st, "directory")
			m, v := p.mountOf(dir)
			require.NotNil(t, m, "%s: %s.directory %s is on no volume", p.source, st, dir)
			assert.NotEqual(t, true, m["readOnly"], "%s: %s must be writable", p.source, dir)
			assert.True(t, v["hostPath"] != nil || v["persistentVolumeClaim"] != nil,
				"%s: %s must be on a hostPath or a PersistentVolumeClaim, which outlive the pod", p.source, dir)
			if cd := str(p.config, "extensions", st, "compaction", "directory"); cd != "" {
				assert.True(t, under(cd, str(m, "mountPath")), "%s: compaction.directory must be on the queue's volume", p.source)
			}
			assert.Equal(t, 0, get(e, "retry_on_failure", "max_elapsed_time"), "%s: %s retries until delivered", p.source, id)
			assert.Equal(t, "bytes", str(q, "sizer"), "%s: %s queue bounded in bytes", p.source, id)
			qs, _ := get(q, "queue_size").(int)
			ms, _ := get(p.config, "extensions", st, "max_size").(int)
			assert.True(t, qs > 0 && qs < ms, "%s: queue_size %d must be below file_storage max_size %d", p.source, qs, ms)
		}
		for _, sig := range []string{"metrics", "logs"} {
			for _, proc := range strs(p.config, "service", "pipelines", sig, "processors") {
				assert.NotEqual(t, "batch", typeOf(proc), "%s: %s: batch processor acknowledges data it holds in memory", p.source, sig)
			}
		}
	}
}

// The gateway's queue volume is the PersistentVolumeClaim of the kustomization, and the
// Deployment replaces its pod without overlapping (the claim is ReadWriteOnce).
func TestGatewayQueueVolume(t *testing.T) {
	ms := loadManifests(t)
	gw := find(t, ms, "Deployment", gatewayName)
	p := podOf(t, ms, gw)
	var claim string
	for _, v := range p.volumes {
		if c := str(v, "persistentVolumeClaim", "claimName"); c != "" {
			claim = c
		}
	}
	require.NotEmpty(t, claim)
	pvc := find(t, ms, "PersistentVolumeClaim", claim)
	assert.Equal(t, []string{"ReadWriteOnce"}, strs(pvc.obj, "spec", "accessModes"))
	assert.Equal(t, "Recreate", str(gw.obj, "spec", "strategy", "type"))
	assert.Equal(t, 65532, get(p.spec, "securityContext", "fsGroup"), "the non-root gateway must own the volume")
	size, err := bytesOf(str(pvc.obj, "spec", "resources", "requests", "storage"))
	require.NoError(t, err)
	max, _ := get(p.config, "extensions", "safe_file_storage/queue", "max_size").(int)
	assert.Less(t, int64(max), size, "file_storage max_size must fit the claim")
}

// The gateway's memory_limiter works in percentages of the container's limit (so it follows a
// changed limit), and GOMEMLIMIT sits between its soft and hard limit.
func TestGatewayMemoryLimits(t *testing.T) {
	p := gatewayPod(t)
	ml := mapAt(p.config, "processors", "memory_limiter")
	hard, _ := ml["limit_percentage"].(int)
	spike, _ := ml["spike_limit_percentage"].(int)
	require.True(t, hard > 0 && spike > 0 && spike < hard, "limit_percentage and spike_limit_percentage")
	limit, err := bytesOf(str(p.container, "resources", "limits", "memory"))
	require.NoError(t, err)
	v, ok := p.envValue("GOMEMLIMIT")
	require.True(t, ok)
	soft, err := bytesOf(v)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, soft, limit*int64(hard-spike)/100, "GOMEMLIMIT below memory_limiter's soft limit makes the GC thrash first")
	assert.LessOrEqual(t, soft, limit*int64(hard)/100, "GOMEMLIMIT above memory_limiter's hard limit")
}

// The cert-manager resources issue exactly the Secrets the pods mount.
func TestCertManagerSecrets(t *testing.T) {
	issued := map[string]map[string]any{}
	for _, d := range decodeFile(t, certMgrFile) {
		if str(d, "kind") == "Certificate" {
			issued[str(d, "spec", "secretName")] = d
		}
	}
	gw, ok := issued[gatewayTLS]
	require.True(t, ok, "a Certificate for %s", gatewayTLS)
	assert.Contains(t, strs(gw, "spec", "dnsNames"), gatewayName+"."+namespace+".svc", "the name agents dial")
	_, ok = issued[agentTLS]
	assert.True(t, ok, "a Certificate for %s (its ca.crt is what agents verify against)", agentTLS)
	for _, c := range issued {
		assert.Equal(t, namespace, str(c, "metadata", "namespace"))
	}
}

// Every shipped classifier's window has a byte budget, and it fits the pod: at most a quarter
// of the container's memory limit (the live window plus the Go GC's headroom stays under half,
// leaving the rest to receivers, queues and batches).
func TestWindowBudgetFitsMemoryLimit(t *testing.T) {
	for _, p := range allPods(t) {
		oc := mapAt(p.config, "processors", "oom_classifier")
		if oc == nil {
			continue
		}
		budget, ok := oc["max_bytes"].(int)
		if !assert.True(t, ok, "%s: oom_classifier.max_bytes must be set", p.source) {
			continue
		}
		limit, err := bytesOf(str(p.container, "resources", "limits", "memory"))
		require.NoError(t, err, "%s: memory limit", p.source)
		assert.LessOrEqual(t, int64(budget), limit/4, "%s: max_bytes above a quarter of the memory limit", p.source)
		assert.Positive(t, oc["max_gpus"], "%s: max_gpus", p.source)
	}
}

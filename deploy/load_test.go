// Package deploy_test checks the Kubernetes manifests and Helm values under deploy/: that they
// parse, that the pod specs keep the security invariants the README promises, and that each
// manifest agrees with the collector configuration it carries (mounts, ports, env vars).
package deploy_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const (
	kubeDir    = "kubernetes"
	helmValues = "helm/values.yaml"
	namespace  = "otelcol-gpumem"
)

// manifest is one YAML document of a file under kubernetes/.
type manifest struct {
	file string
	obj  map[string]any
}

func (m manifest) kind() string { return str(m.obj, "kind") }
func (m manifest) name() string { return str(m.obj, "metadata", "name") }
func (m manifest) String() string {
	return fmt.Sprintf("%s %s/%s", m.file, m.kind(), m.name())
}

// decodeAll reads every document of a multi-document YAML stream; empty documents are skipped.
func decodeAll(r io.Reader) ([]map[string]any, error) {
	dec := yaml.NewDecoder(r)
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode document %d: %w", len(docs)+1, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

func decodeFile(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	docs, err := decodeAll(f)
	require.NoError(t, err, "parse %s", path)
	return docs
}

// loadManifests parses every YAML file under kubernetes/, kustomization.yaml included.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no manifests under %s", kubeDir)
	var out []manifest
	for _, f := range files {
		docs := decodeFile(t, f)
		require.NotEmpty(t, docs, "%s holds no document", f)
		for _, d := range docs {
			out = append(out, manifest{file: filepath.Base(f), obj: d})
		}
	}
	return out
}

func loadHelmValues(t *testing.T) map[string]any {
	t.Helper()
	docs := decodeFile(t, helmValues)
	require.Len(t, docs, 1, "%s must be one document", helmValues)
	return docs[0]
}

func find(t *testing.T, ms []manifest, kind, name string) manifest {
	t.Helper()
	for _, m := range ms {
		if m.kind() == kind && m.name() == name {
			return m
		}
	}
	require.FailNow(t, "manifest not found", "%s/%s", kind, name)
	return manifest{}
}

func workloads(ms []manifest) []manifest {
	var out []manifest
	for _, m := range ms {
		if m.kind() == "DaemonSet" || m.kind() == "Deployment" {
			out = append(out, m)
		}
	}
	return out
}

// --- navigation in decoded YAML (map[string]any / []any) ---

func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func mapAt(v any, path ...string) map[string]any {
	m, _ := get(v, path...).(map[string]any)
	return m
}

func listAt(v any, path ...string) []any {
	l, _ := get(v, path...).([]any)
	return l
}

func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func strs(v any, path ...string) []string {
	var out []string
	for _, e := range listAt(v, path...) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func maps(l []any) []map[string]any {
	var out []map[string]any
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// byName returns the element of a list of maps whose "name" is name.
func byName(l []any, name string) map[string]any {
	for _, m := range maps(l) {
		if m["name"] == name {
			return m
		}
	}
	return nil
}

// --- pod view shared by the manifests and the Helm values ---

// pod is what the invariants look at, whether it comes from a workload's pod template or is
// assembled from the Helm chart's values.
type pod struct {
	source    string
	spec      map[string]any   // pod-level fields (securityContext, hostPID, volumes, ...)
	container map[string]any   // the collector container
	volumes   []map[string]any // spec.volumes
	config    map[string]any   // the collector configuration it runs
}

// envValue returns the literal value of an env var of the container and whether it is set
// (a valueFrom counts as set with value "").
func (p pod) envValue(name string) (string, bool) {
	e := byName(listAt(p.container, "env"), name)
	if e == nil {
		return "", false
	}
	return str(e, "value"), true
}

// mountFor returns the container's mount of the volume whose hostPath is hostPath, and that volume.
func (p pod) mountFor(hostPath string) (mount, volume map[string]any) {
	for _, v := range p.volumes {
		if str(v, "hostPath", "path") != hostPath {
			continue
		}
		return byName(listAt(p.container, "volumeMounts"), str(v, "name")), v
	}
	return nil, nil
}

// podOf builds the pod view of a workload; its config is the ConfigMap key named by --config.
func podOf(t *testing.T, ms []manifest, w manifest) pod {
	t.Helper()
	spec := mapAt(w.obj, "spec", "template", "spec")
	require.NotNil(t, spec, "%s: no pod template", w)
	containers := maps(listAt(spec, "containers"))
	require.Len(t, containers, 1, "%s: one collector container expected", w)
	p := pod{source: w.String(), spec: spec, container: containers[0], volumes: maps(listAt(spec, "volumes"))}
	p.config = configOf(t, ms, p)
	return p
}

// configOf follows --config=<dir>/<key> to the mounted ConfigMap and parses that key.
func configOf(t *testing.T, ms []manifest, p pod) map[string]any {
	t.Helper()
	var cfgPath string
	for _, a := range strs(p.container, "args") {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			cfgPath = v
		}
	}
	require.NotEmpty(t, cfgPath, "%s: no --config argument", p.source)
	dir, key := filepath.Dir(cfgPath), filepath.Base(cfgPath)
	for _, m := range maps(listAt(p.container, "volumeMounts")) {
		if str(m, "mountPath") != dir {
			continue
		}
		v := byName(listAt(p.spec, "volumes"), str(m, "name"))
		cmName := str(v, "configMap", "name")
		require.NotEmpty(t, cmName, "%s: %s is not a ConfigMap volume", p.source, dir)
		data := str(find(t, ms, "ConfigMap", cmName).obj, "data", key)
		require.NotEmpty(t, data, "%s: ConfigMap %s has no key %s", p.source, cmName, key)
		return parseConfig(t, data)
	}
	require.FailNow(t, "config directory not mounted", "%s: %s", p.source, dir)
	return nil
}

func parseConfig(t *testing.T, text string) map[string]any {
	t.Helper()
	docs, err := decodeAll(strings.NewReader(text))
	require.NoError(t, err)
	require.Len(t, docs, 1)
	return docs[0]
}

// helmPod assembles the agent pod the chart renders from the values: the chart adds MY_POD_IP
// itself and mounts its ConfigMap at /conf.
func helmPod(t *testing.T, values map[string]any) pod {
	t.Helper()
	env := append([]any{map[string]any{"name": "MY_POD_IP", "valueFrom": map[string]any{}}}, listAt(values, "extraEnvs")...)
	container := map[string]any{
		"securityContext": get(values, "securityContext"),
		"resources":       get(values, "resources"),
		"livenessProbe":   get(values, "livenessProbe"),
		"readinessProbe":  get(values, "readinessProbe"),
		"args":            listAt(values, "command", "extraArgs"),
		"env":             env,
		"volumeMounts":    get(values, "extraVolumeMounts"),
	}
	spec := map[string]any{
		"securityContext": get(values, "podSecurityContext"),
		"volumes":         get(values, "extraVolumes"),
		"nodeSelector":    get(values, "nodeSelector"),
		"affinity":        get(values, "affinity"),
		"tolerations":     get(values, "tolerations"),
		"hostPID":         get(values, "hostPID"),
	}
	if rc := str(values, "runtimeClassName"); rc != "" {
		spec["runtimeClassName"] = rc
	}
	cfg := withoutNulls(mapAt(values, "config"))
	return pod{source: helmValues, spec: spec, container: container, volumes: maps(listAt(spec, "volumes")), config: cfg}
}

// withoutNulls drops null-valued keys at any depth, as Helm does when it merges values over
// the chart's defaults: a null there means "remove the default".
func withoutNulls(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch tv := v.(type) {
		case nil:
			continue
		case map[string]any:
			out[k] = withoutNulls(tv)
		default:
			out[k] = v
		}
	}
	return out
}

var envRef = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// envRefs lists the env vars a configuration references without a default, sorted.
func envRefs(v any) []string {
	set := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch tv := v.(type) {
		case map[string]any:
			for _, e := range tv {
				walk(e)
			}
		case []any:
			for _, e := range tv {
				walk(e)
			}
		case string:
			for _, m := range envRef.FindAllStringSubmatch(tv, -1) {
				if m[2] == "" {
					set[m[1]] = true
				}
			}
		}
	}
	walk(v)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

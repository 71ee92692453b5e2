package podresources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	cidTrain = "7c1f0e5a9b2d4c3e8f6a1b0d2e4c6a8b9d1f3e5a7c9b0d2e4f6a8c0e2d4b6a8c"
	uidTrain = "0b6d3c0e-1f2a-4b5c-8d9e-0f1a2b3c4d5e"
)

func TestParsePodLogDir(t *testing.T) {
	ns, pod, uid, ok := ParsePodLogDir("ml_train-7d9f8c6b5-x2x4z_" + uidTrain)
	assert.True(t, ok)
	assert.Equal(t, []string{"ml", "train-7d9f8c6b5-x2x4z", uidTrain}, []string{ns, pod, uid})
	// A static pod's uid is the 32-hex config hash.
	_, _, uid, ok = ParsePodLogDir("kube-system_etcd-node1_d41d8cd98f00b204e9800998ecf8427e")
	assert.True(t, ok)
	assert.Equal(t, "d41d8cd98f00b204e9800998ecf8427e", uid)
	for _, bad := range []string{"", "ml", "ml_pod", "ml__uid", "_pod_uid", "ml_pod_", "ml_pod_uid_extra", "lost+found"} {
		_, _, _, ok := ParsePodLogDir(bad)
		assert.False(t, ok, bad)
	}
}

func TestParseContainerLogName(t *testing.T) {
	pod, ns, c, id, ok := ParseContainerLogName("train-0_ml_cuda-main-" + cidTrain + ".log")
	assert.True(t, ok)
	assert.Equal(t, []string{"train-0", "ml", "cuda-main", cidTrain}, []string{pod, ns, c, id})
	for _, bad := range []string{
		"", ".log", "train-0_ml_main.log", "train-0_ml_-" + cidTrain + ".log", "train-0_ml_main-" + cidTrain,
		"train-0_ml_main-XYZ.log", "train-0_ml_ma_in-" + cidTrain + ".log", "train-0_ml_main-" + cidTrain + ".log.1",
	} {
		_, _, _, _, ok := ParseContainerLogName(bad)
		assert.False(t, ok, bad)
	}
}

// fakeLogTree writes the kubelet's log directory shapes under a temp dir and
// returns the pods directory.
func fakeLogTree(t testing.TB, pods, links []string) string {
	root := t.TempDir()
	podsDir := filepath.Join(root, "pods")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "containers"), 0o755))
	require.NoError(t, os.MkdirAll(podsDir, 0o755))
	for _, name := range pods {
		require.NoError(t, os.MkdirAll(filepath.Join(podsDir, name), 0o755))
	}
	for _, l := range links {
		// Dangling targets are fine: only the names are read.
		require.NoError(t, os.Symlink("/var/log/pods/x/0.log", filepath.Join(root, "containers", l)))
	}
	return podsDir
}

func TestScanLogDirs(t *testing.T) {
	podsDir := fakeLogTree(t, []string{"ml_train-0_" + uidTrain, "odd-name", "a_b_c_d"}, []string{"train-0_ml_main-" + cidTrain + ".log", "junk.log", "README"})
	x := scanLogDirs(podsDir)
	require.NoError(t, x.podsErr)
	require.NoError(t, x.contErr)
	assert.Equal(t, map[string]podKey{uidTrain: {"ml", "train-0"}}, x.podByUID)
	assert.Equal(t, map[podKey]string{{"ml", "train-0"}: uidTrain}, x.uidByPod)
	assert.Equal(t, map[string]containerRef{cidTrain: {"ml", "train-0", "main"}}, x.containers)

	missing := scanLogDirs(filepath.Join(t.TempDir(), "nope", "pods"))
	assert.ErrorContains(t, missing.podsErr, "open kubelet log directory")
	assert.Empty(t, missing.podByUID)
}

func TestReadNamesIsBounded(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		require.NoError(t, os.Mkdir(filepath.Join(dir, strings.Repeat("d", i+1)), 0o755))
	}
	names, more, err := readNames(dir, 3)
	require.NoError(t, err)
	assert.Len(t, names, 3)
	assert.True(t, more)
	names, more, err = readNames(dir, 5)
	require.NoError(t, err)
	assert.Len(t, names, 5)
	assert.False(t, more)
}

// FuzzLogNames: the parsers never panic, and what they accept round-trips to
// the name the kubelet would have written.
func FuzzLogNames(f *testing.F) {
	for _, s := range []string{
		"ml_train-0_" + uidTrain, "kube-system_etcd-node1_d41d8cd98f00b204e9800998ecf8427e",
		"train-0_ml_cuda-main-" + cidTrain + ".log", "nvidia-dcgm-exporter-5x2kq_gpu-operator_nvidia-dcgm-exporter-0a1b.log",
		"a_b_c", "_-.log", "x_y_-.log",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ns, pod, uid, ok := ParsePodLogDir(name); ok && ns+"_"+pod+"_"+uid != name {
			t.Fatalf("pod dir %q split into %q %q %q", name, ns, pod, uid)
		}
		if pod, ns, c, id, ok := ParseContainerLogName(name); ok && pod+"_"+ns+"_"+c+"-"+id+".log" != name {
			t.Fatalf("container log %q split into %q %q %q %q", name, pod, ns, c, id)
		}
	})
}

func fakePod(t testing.TB, podsDir, name string) {
	require.NoError(t, os.Mkdir(filepath.Join(podsDir, name), 0o755))
}

package procfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testCID = "3f9a1e0c2b7d4c5e8a6f1b2d3c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a"
	testPod = "6b0e7c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c"
)

func TestParseCgroupFixtures(t *testing.T) {
	tests := []struct {
		file      string
		container string
		pod       string
	}{
		{"docker-cgroupfs-v1.txt", testCID, ""},
		{"docker-systemd-v2.txt", testCID, ""},
		{"containerd-k8s-burstable-systemd-v2.txt", testCID, testPod},
		{"containerd-k8s-guaranteed-systemd-v2.txt", testCID, testPod},
		{"containerd-k8s-besteffort-cgroupfs-v1.txt", testCID, testPod},
		{"containerd-k8s-burstable-cgroupfs-v2.txt", testCID, testPod},
		{"containerd-k8s-guaranteed-cgroupfs-v2.txt", testCID, testPod},
		{"crio-k8s-systemd-v2.txt", testCID, testPod},
		{"crio-conmon-systemd-v2.txt", "", testPod},
		{"crio-k8s-cgroupfs-v2.txt", testCID, testPod},
		{"podman-root-v2.txt", testCID, ""},
		{"podman-rootless-v2.txt", testCID, ""},
		{"host-session-v2.txt", "", ""},
		{"host-root-v2.txt", "", ""},
		{"static-pod-systemd-v2.txt", testCID, "0c5e9b1f7a2d4e6c8b3a9f1d2e4c6a8b"},
		{"kind-nested-systemd-v2.txt", testCID, testPod},
		{"cri-dockerd-k8s-systemd-v2.txt", testCID, testPod},
		{"pod-slice-only-v2.txt", "", testPod},
		{"hybrid-v1-v2.txt", testCID, testPod},
		{"not-a-container-short-id.txt", "", ""},
		{"garbage.txt", "", ""},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "cgroup", "*.txt"))
	require.NoError(t, err)
	require.Len(t, tests, len(files), "every fixture needs a table row")

	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "cgroup", tt.file))
			require.NoError(t, err)
			cid, pod := ParseCgroup(string(b))
			assert.Equal(t, tt.container, cid, "container id")
			assert.Equal(t, tt.pod, pod, "pod uid")
		})
	}
}

func TestParseCgroupInline(t *testing.T) {
	tests := []struct {
		name, content, container, pod string
	}{
		{"empty", "", "", ""},
		{"no trailing newline", "0::/system.slice/docker-" + testCID + ".scope", testCID, ""},
		{"colon in path", "0::/system.slice/containerd.service/kubepods-burstable-pod6b0e7c1a_2d3f_4e5a_8b9c_0d1e2f3a4b5c.slice:cri-containerd:" + testCID, testCID, testPod},
		{"uppercase id is not an id", "0::/docker/" + "3F9A1E0C2B7D4C5E8A6F1B2D3C4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F6A", "", ""},
		{"pod outside kubepods ignored", "0::/pod" + testPod + "/" + testCID, testCID, ""},
		{"65 hex digits", "0::/docker/" + testCID + "0", "", ""},
		{"innermost scope wins", "0::/system.slice/docker-" + testCID + ".scope/libpod-" + "0000000000000000000000000000000000000000000000000000000000000001.scope",
			"0000000000000000000000000000000000000000000000000000000000000001", ""},
		{"malformed pod uid", "0::/kubepods/burstable/pod6b0e7c1a-2d3f-4e5a-8b9c/" + testCID, testCID, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cid, pod := ParseCgroup(tt.content)
			assert.Equal(t, tt.container, cid, "container id")
			assert.Equal(t, tt.pod, pod, "pod uid")
		})
	}
}

func FuzzParseCgroup(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "cgroup", "*.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, content string) {
		cid, pod := ParseCgroup(content)
		if cid != "" && !isHex(cid, 64) {
			t.Fatalf("container id %q is not 64 hex digits", cid)
		}
		if pod != "" && !isUUID(pod) && !isHex(pod, 32) {
			t.Fatalf("pod uid %q is neither a UUID nor a config hash", pod)
		}
	})
}

func TestParseNSpid(t *testing.T) {
	tests := []struct {
		name, status string
		want         int
	}{
		{"host process", "Name:\tpython3\nPid:\t4242\nNSpid:\t4242\n", 4242},
		{"in container", "Name:\tpython3\nTgid:\t4242\nNSpid:\t4242\t17\n", 17},
		{"nested namespaces", "NSpid:\t4242\t900\t7\n", 7},
		{"old kernel", "Name:\tpython3\nPid:\t4242\n", 0},
		{"empty line", "NSpid:\n", 0},
		{"garbage", "NSpid:\tabc\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseNSpid(tt.status))
		})
	}
}

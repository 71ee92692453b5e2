package procfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testCID = "3f9a1e0c2b7d4c5e8a6f1b2d3c4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a"
	testPod = "6b0e7c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c"
)

func TestParseCgroupFixtures(t *testing.T) {
	const (
		mobyPod = "9a18ffb8-8513-11e7-b26e-7e29fbe2a5a3"
		mobyCID = "d28e0087cf8f3f0429f755d60b0de415b20fcf76736ded7bab6e30e7b739ee36"
	)
	tests := []struct {
		file string
		want Cgroup
	}{
		{"docker-cgroupfs-v1.txt", Cgroup{ContainerID: testCID}},
		{"docker-systemd-v2.txt", Cgroup{ContainerID: testCID}},
		{"containerd-k8s-burstable-systemd-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"containerd-k8s-guaranteed-systemd-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"containerd-k8s-besteffort-cgroupfs-v1.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"containerd-k8s-burstable-cgroupfs-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"containerd-k8s-guaranteed-cgroupfs-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"crio-k8s-systemd-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"crio-conmon-systemd-v2.txt", Cgroup{PodUID: testPod}},
		{"crio-k8s-cgroupfs-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"podman-root-v2.txt", Cgroup{ContainerID: testCID}},
		{"podman-rootless-v2.txt", Cgroup{ContainerID: testCID}},
		{"host-session-v2.txt", Cgroup{}},
		{"host-root-v2.txt", Cgroup{}},
		{"static-pod-systemd-v2.txt", Cgroup{ContainerID: testCID, PodUID: "0c5e9b1f7a2d4e6c8b3a9f1d2e4c6a8b"}},
		{"kind-nested-systemd-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"cri-dockerd-k8s-systemd-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"pod-slice-only-v2.txt", Cgroup{PodUID: testPod}},
		{"hybrid-v1-v2.txt", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"not-a-container-short-id.txt", Cgroup{}},
		{"garbage.txt", Cgroup{}},

		// Published on real nodes; SOURCES.md names each one's origin.
		{"moby-k8s-besteffort-cgroupfs-v1.txt", Cgroup{ContainerID: mobyCID, PodUID: mobyPod}},
		{"otel-java-containerd-colon-v1.txt", Cgroup{
			ContainerID: "ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459",
			PodUID:      "0125ec2f-b64a-4868-8f5b-94b56cbab864"}},
		{"runc-crio-systemd-v1.txt", Cgroup{
			ContainerID: "5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c",
			PodUID:      "a5c1f8d5-1919-434d-add7-4afaafdaef89"}},
		{"runc-crio-conmon-systemd-v2.txt", Cgroup{PodUID: "207aaad1-659f-4db8-88e0-46e0cdcc3004"}},
		{"lxc-cri-dockerd-systemd-v1.txt", Cgroup{
			ContainerID: "d0b3604b67ac7930dd34ba3a796627e3e4717d12309e90a4afe3f38b6816ac98",
			PodUID:      "7d4424e6-bb13-42f4-a47a-45a4828bf54d"}},

		// Relative to the reader's cgroup namespace.
		{"relative-besteffort-cgroupfs-v2.txt", Cgroup{ContainerID: mobyCID, PodUID: mobyPod}},
		{"relative-burstable-cgroupfs-v2.txt", Cgroup{ContainerID: mobyCID, PodUID: mobyPod}},
		{"relative-burstable-static-cgroupfs-v2.txt", Cgroup{
			ContainerID: "823b5a6d9aaa8da5c0ecda3e7cbcd6729673437965dc600ffcb0a2651960f945",
			PodUID:      "89f4f2cb511c3b0b7e5272cff5ec37bf"}},
		{"relative-containerd-systemd-v2.txt", Cgroup{
			ContainerID: "afc114c69e71f18166abd63715398d7daa763c69a6454f71157272ab0bdca783",
			PodUID:      "40934a46-d409-4f4a-bb8b-1ec0b0436320"}},
		// A container of the reader's own pod: the pod is the level the reader cannot name.
		{"relative-sibling-container-v2.txt", Cgroup{ContainerID: mobyCID}},

		// Slurm.
		{"slurm-enroot-multiple-slurmd-v2.txt", Cgroup{SlurmJobID: "4749", SlurmStep: "0"}},
		{"slurm-rstudio-batch-v1.txt", Cgroup{SlurmJobID: "13759490", SlurmStep: "batch"}},
		{"slurm-sluid-v2.txt", Cgroup{SlurmJobID: "s5K1KKYAYG5D00", SlurmStep: "0"}},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "cgroup", "*.txt"))
	require.NoError(t, err)
	require.Len(t, tests, len(files), "every fixture needs a table row")

	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "cgroup", tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, ParseCgroup(string(b)))
		})
	}
}

// TestCgroupFixtureSources keeps SOURCES.md in step with the fixtures: each one is listed.
func TestCgroupFixtureSources(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "cgroup", "SOURCES.md"))
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join("testdata", "cgroup", "*.txt"))
	require.NoError(t, err)
	for _, f := range files {
		assert.Contains(t, string(src), "`"+filepath.Base(f)+"`", "SOURCES.md does not list the fixture")
	}
}

func TestParseCgroupInline(t *testing.T) {
	const uid = "pod6b0e7c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c"
	tests := []struct {
		name, content string
		want          Cgroup
	}{
		{"empty", "", Cgroup{}},
		{"no trailing newline", "0::/system.slice/docker-" + testCID + ".scope", Cgroup{ContainerID: testCID}},
		{"colon in path", "0::/system.slice/containerd.service/kubepods-burstable-pod6b0e7c1a_2d3f_4e5a_8b9c_0d1e2f3a4b5c.slice:cri-containerd:" + testCID, Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"uppercase id is not an id", "0::/docker/" + "3F9A1E0C2B7D4C5E8A6F1B2D3C4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F6A", Cgroup{}},
		{"pod outside kubepods ignored", "0::/" + uid + "/" + testCID, Cgroup{ContainerID: testCID}},
		{"65 hex digits", "0::/docker/" + testCID + "0", Cgroup{}},
		{"innermost scope wins", "0::/system.slice/docker-" + testCID + ".scope/libpod-" + "0000000000000000000000000000000000000000000000000000000000000001.scope",
			Cgroup{ContainerID: "0000000000000000000000000000000000000000000000000000000000000001"}},
		{"malformed pod uid", "0::/kubepods/burstable/pod6b0e7c1a-2d3f-4e5a-8b9c/" + testCID, Cgroup{ContainerID: testCID}},

		// Relative paths of any depth.
		{"relative guaranteed one level", "0::/../" + uid + "/" + testCID, Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative burstable one level", "0::/../burstable/" + uid + "/" + testCID, Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative deep", "0::/../../../../besteffort/" + uid + "/" + testCID, Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative pod cgroup only", "0::/../../" + uid, Cgroup{PodUID: testPod}},
		{"relative crio cgroupfs", "0::/../burstable/" + uid + "/crio-" + testCID, Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative systemd guaranteed", "0::/../kubepods-pod6b0e7c1a_2d3f_4e5a_8b9c_0d1e2f3a4b5c.slice/cri-containerd-" + testCID + ".scope", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative systemd crio", "0::/../../kubepods-besteffort.slice/kubepods-besteffort-pod6b0e7c1a_2d3f_4e5a_8b9c_0d1e2f3a4b5c.slice/crio-" + testCID + ".scope", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative cri-dockerd", "0::/../../kubepods-burstable-pod6b0e7c1a_2d3f_4e5a_8b9c_0d1e2f3a4b5c.slice/docker-" + testCID + ".scope", Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative conmon is not the container", "0::/../kubepods-burstable-pod6b0e7c1a_2d3f_4e5a_8b9c_0d1e2f3a4b5c.slice/crio-conmon-" + testCID + ".scope", Cgroup{PodUID: testPod}},
		{"relative v1 line", "4:memory:/../../besteffort/" + uid + "/" + testCID, Cgroup{ContainerID: testCID, PodUID: testPod}},
		{"relative under another parent", "0::/../guaranteed/" + uid + "/" + testCID, Cgroup{ContainerID: testCID}},
		{"dotdot not leading", "0::/x/../" + uid + "/" + testCID, Cgroup{ContainerID: testCID}},

		// Slurm steps and roots.
		{"slurm v2 default scope", "0::/system.slice/slurmstepd.scope/job_42/step_3/user/task_1", Cgroup{SlurmJobID: "42", SlurmStep: "3"}},
		{"slurm batch", "0::/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0", Cgroup{SlurmJobID: "42", SlurmStep: "batch"}},
		{"slurm extern", "0::/system.slice/slurmstepd.scope/job_42/step_extern/user/task_special", Cgroup{SlurmJobID: "42", SlurmStep: "extern"}},
		{"slurm interactive", "0::/system.slice/slurmstepd.scope/job_42/step_interactive/user/task_0", Cgroup{SlurmJobID: "42", SlurmStep: "interactive"}},
		{"slurm het component", "0::/system.slice/slurmstepd.scope/job_42/step_0+1/user/task_0", Cgroup{SlurmJobID: "42", SlurmStep: "0+1"}},
		{"slurmstepd itself", "0::/system.slice/slurmstepd.scope/job_42/step_0/slurm", Cgroup{SlurmJobID: "42", SlurmStep: "0"}},
		{"slurm v1 multiple slurmd", "7:devices:/slurm_node1/uid_1000/job_42/step_0/task_0", Cgroup{SlurmJobID: "42", SlurmStep: "0"}},
		{"slurm job level only", "0::/system.slice/slurmstepd.scope/job_42", Cgroup{}},
		{"slurm pending step", "0::/system.slice/slurmstepd.scope/job_42/step_TBD/user/task_0", Cgroup{}},
		{"slurm leading zero", "0::/system.slice/slurmstepd.scope/job_042/step_0/user", Cgroup{}},
		{"slurm job id over uint32", "0::/system.slice/slurmstepd.scope/job_4294967296/step_0/user", Cgroup{}},
		{"slurm job id max uint32", "0::/system.slice/slurmstepd.scope/job_4294967295/step_0/user", Cgroup{SlurmJobID: "4294967295", SlurmStep: "0"}},
		{"slurm bad het", "0::/system.slice/slurmstepd.scope/job_42/step_0+/user", Cgroup{}},
		{"sluid with I is not one", "0::/system.slice/slurmstepd.scope/s5K1KKYAYG5DI0/step_0/user", Cgroup{}},
		{"sluid top digit over F", "0::/system.slice/slurmstepd.scope/sGK1KKYAYG5D00/step_0/user", Cgroup{}},
		{"sluid lower case", "0::/system.slice/slurmstepd.scope/s5k1kkyayg5d00/step_0/user", Cgroup{}},
		{"step not under job", "0::/system.slice/slurmstepd.scope/step_0/job_42", Cgroup{}},
		{"slurm job with a container below", "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0/docker-" + testCID + ".scope", Cgroup{ContainerID: testCID, SlurmJobID: "42", SlurmStep: "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseCgroup(tt.content))
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
		cg := ParseCgroup(content)
		if cg.ContainerID != "" && !isHex(cg.ContainerID, 64) {
			t.Fatalf("container id %q is not 64 hex digits", cg.ContainerID)
		}
		if cg.PodUID != "" && !isUUID(cg.PodUID) && !isHex(cg.PodUID, 32) {
			t.Fatalf("pod uid %q is neither a UUID nor a config hash", cg.PodUID)
		}
		if (cg.SlurmJobID == "") != (cg.SlurmStep == "") {
			t.Fatalf("job %q without step %q or the reverse", cg.SlurmJobID, cg.SlurmStep)
		}
		if cg.SlurmJobID != "" {
			if !isUint32(cg.SlurmJobID) && !isSLUID(cg.SlurmJobID) {
				t.Fatalf("job %q is neither a job id nor a SLUID", cg.SlurmJobID)
			}
			if _, ok := slurmStep("step_" + cg.SlurmStep); !ok {
				t.Fatalf("step %q is not a Slurm step", cg.SlurmStep)
			}
			if !strings.Contains(content, "/step_"+cg.SlurmStep) || !strings.Contains(content, cg.SlurmJobID+"/step_") {
				t.Fatalf("job %q step %q not in the content as a pair", cg.SlurmJobID, cg.SlurmStep)
			}
		}
		// Every id found is in the content: the parser never makes one up.
		for _, id := range []string{cg.ContainerID, cg.SlurmJobID} {
			if !strings.Contains(content, id) {
				t.Fatalf("%q not in the content", id)
			}
		}
		if cg.PodUID != "" && !strings.Contains(content, cg.PodUID) && !strings.Contains(content, strings.ReplaceAll(cg.PodUID, "-", "_")) {
			t.Fatalf("pod %q not in the content", cg.PodUID)
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

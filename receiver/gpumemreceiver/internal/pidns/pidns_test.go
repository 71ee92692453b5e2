package pidns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree builds a fake procfs: each pid gets a status with the given NSpid fields; self
// links to selfPID; selfNS (when non-zero) is the ns/pid link of self.
type proc struct {
	pid   int
	nspid []int
}

func tree(t *testing.T, selfPID int, selfNS uint64, procs ...proc) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, fmt.Sprint(p.pid))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "ns"), 0o755))
		var f []string
		for _, n := range p.nspid {
			f = append(f, fmt.Sprint(n))
		}
		status := "Name:\tx\nPid:\t" + fmt.Sprint(p.pid) + "\n"
		if len(f) > 0 {
			status += "NSpid:\t" + strings.Join(f, "\t") + "\n"
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644))
		if p.pid == selfPID && selfNS != 0 {
			require.NoError(t, os.Symlink(fmt.Sprintf("pid:[%d]", selfNS), filepath.Join(dir, "ns", "pid")))
		}
	}
	if selfPID != 0 {
		require.NoError(t, os.Symlink(fmt.Sprint(selfPID), filepath.Join(root, "self")))
	}
	return root
}

const childNS = 4026532175

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name string
		// procRoot and selfProc; selfProc "" is procRoot
		procRoot, selfProc func(t *testing.T) string
		want               Verdict
		depth              int
		nested             int
	}{{
		name:     "bare metal or hostPID: the initial namespace",
		procRoot: func(t *testing.T) string { return tree(t, 4242, InitIno, proc{1, []int{1}}, proc{4242, []int{4242}}) },
		want:     Host,
	}, {
		name: "pod without hostPID, its own /proc",
		procRoot: func(t *testing.T) string {
			return tree(t, 7, childNS, proc{1, []int{1}}, proc{7, []int{7}})
		},
		want: Own,
	}, {
		name: "pod without hostPID, the host's /proc at /host/proc",
		procRoot: func(t *testing.T) string {
			return tree(t, 90210, 0, proc{1, []int{1}}, proc{90210, []int{90210, 7}}, proc{5000, []int{5000, 12}})
		},
		selfProc: func(t *testing.T) string { return tree(t, 7, childNS, proc{7, []int{7}}) },
		want:     Below, depth: 1,
	}, {
		name: "hostPID pod on a node that is a container (kind): pods' processes below",
		procRoot: func(t *testing.T) string {
			return tree(t, 300, childNS, proc{1, []int{1}}, proc{250, []int{250}}, proc{300, []int{300}}, proc{812, []int{812, 1}})
		},
		want: HostLike, nested: 812,
	}, {
		name: "a kernel without NSpid",
		procRoot: func(t *testing.T) string {
			return tree(t, 7, childNS, proc{7, nil})
		},
		want: Unknown, depth: -1,
	}, {
		name:     "proc_root of a namespace that does not hold the collector",
		procRoot: func(t *testing.T) string { return tree(t, 0, 0, proc{1, []int{1}}) },
		selfProc: func(t *testing.T) string { return tree(t, 7, childNS, proc{7, []int{7}}) },
		want:     Unknown, depth: -1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.procRoot(t)
			self := root
			if tc.selfProc != nil {
				self = tc.selfProc(t)
			}
			r := Detect(root, self)
			assert.Equal(t, tc.want, r.Verdict, "%+v", r)
			assert.Equal(t, tc.depth, r.Depth)
			assert.Equal(t, tc.nested, r.NestedPID)
			assert.Equal(t, tc.want == Own || tc.want == Below, r.Verdict.Hides())
			if tc.want == Unknown {
				assert.Error(t, r.Err)
			}
		})
	}
}

// The real /proc of the test: whatever namespace the test runs in, self is found and the
// verdict is one of the decided ones.
func TestDetectRealProc(t *testing.T) {
	r := Detect("/proc", "/proc")
	require.NotEqual(t, Unknown, r.Verdict, "%+v", r)
	assert.NotZero(t, r.NS)
	assert.Equal(t, 0, r.Depth, "/proc is the test's own namespace's procfs")
	t.Logf("verdict %s ns %d took %s", r.Verdict, r.NS, r.Took)
}

func TestReadNSLinkRejectsOtherLinks(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Symlink("net:[4026531840]", filepath.Join(dir, "pid")))
	_, err := readNSLink(filepath.Join(dir, "pid"))
	assert.ErrorContains(t, err, "not pid:[inode]")
}

func TestTranslatesPids(t *testing.T) {
	for v, want := range map[string]bool{
		"470.256.02": false, "535.104.05": false, "535.104.12": false, "535.113.01": true,
		"535.129.03": true, "545.23.06": true, "550.54.15": true, "580.65.06": true,
		"525.147.05": false, "garbage": true,
	} {
		assert.Equal(t, want, TranslatesPids(v), v)
	}
}

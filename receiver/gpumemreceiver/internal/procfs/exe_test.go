package procfs

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noLinkFS hides ReadLink, as an fs.FS that cannot read links does.
type noLinkFS struct{ fs fstest.MapFS }

func (n noLinkFS) Open(name string) (fs.File, error) { return n.fs.Open(name) }

func TestExecutableName(t *testing.T) {
	long := "a-very-long-executable-name" // comm keeps 15 bytes of it
	tree := fstest.MapFS{
		"1/comm": {Data: []byte(long[:15] + "\n")},
		"1/exe":  {Data: []byte("/opt/app/bin/" + long), Mode: fs.ModeSymlink},
		"2/comm": {Data: []byte("python3\n")},
		"2/exe":  {Data: []byte("/usr/bin/python3.12 (deleted)"), Mode: fs.ModeSymlink},
		"3/comm": {Data: []byte("kworker/0:1\n")}, // no exe link: unreadable or a kernel thread
		"4/comm": {Data: []byte("odd\n")},
		"4/exe":  {Data: []byte("/"), Mode: fs.ModeSymlink},
	}
	for pid, want := range map[uint32]string{1: long, 2: "python3.12", 3: "kworker/0:1", 4: "odd"} {
		info, _ := New(tree).Lookup(pid)
		assert.Equal(t, want, info.ExecutableName, "pid %d", pid)
	}

	// A tree that cannot read links at all still names the process, and the missing link
	// is no lookup error (only the three files are).
	tree["1/cgroup"] = &fstest.MapFile{Data: []byte("0::/\n")}
	tree["1/status"] = &fstest.MapFile{Data: []byte("NSpid:\t1\n")}
	info, err := New(noLinkFS{tree}).Lookup(1)
	require.NoError(t, err)
	assert.Equal(t, long[:15], info.ExecutableName)
}

package procfs

import (
	"errors"
	"io/fs"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// countingFS counts opens so tests can see whether the cache was used.
type countingFS struct {
	fstest.MapFS
	opens atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens.Add(1)
	return c.MapFS.Open(name)
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.opens.Add(1)
	return c.MapFS.ReadFile(name)
}

func testTree() *countingFS {
	return &countingFS{MapFS: fstest.MapFS{
		"4242/comm":   {Data: []byte("python3\n")},
		"4242/cgroup": {Data: []byte("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6b0e7c1a_2d3f_4e5a_8b9c_0d1e2f3a4b5c.slice/cri-containerd-" + testCID + ".scope\n")},
		"4242/status": {Data: []byte("Name:\tpython3\nNSpid:\t4242\t17\n")},
		"4242/exe":    {Data: []byte("/usr/bin/python3.11"), Mode: fs.ModeSymlink},
		"77/comm":     {Data: []byte("Xorg\n")},
		"77/cgroup":   {Data: []byte("0::/system.slice/display-manager.service\n")},
		"77/status":   {Data: []byte("Name:\tXorg\nNSpid:\t77\n")},
		"88/comm":     {Data: []byte("vanishing\n")},
	}}
}

func TestLookup(t *testing.T) {
	r := New(testTree())

	info, err := r.Lookup(4242)
	require.NoError(t, err)
	assert.Equal(t, Info{ExecutableName: "python3.11", Comm: "python3", ContainerID: testCID, PodUID: testPod, VPID: 17}, info)

	info, err = r.Lookup(77)
	require.NoError(t, err)
	assert.Equal(t, Info{ExecutableName: "Xorg", Comm: "Xorg", VPID: 77}, info, "no readable exe link: comm")
}

func TestLookupGoneProcess(t *testing.T) {
	r := New(testTree())
	_, err := r.Lookup(999)
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "error %v should wrap fs.ErrNotExist", err)
	assert.Contains(t, err.Error(), "pid 999")
}

func TestLookupPartial(t *testing.T) {
	tree := testTree()
	r := New(tree)
	info, err := r.Lookup(88)
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.Equal(t, "vanishing", info.Comm, "fields that were readable are returned")

	// A failed lookup is not cached: the files are read again.
	before := tree.opens.Load()
	_, _ = r.Lookup(88)
	assert.Greater(t, tree.opens.Load(), before)
}

func TestLookupCachesUntilRetainDrops(t *testing.T) {
	tree := testTree()
	r := New(tree)
	_, err := r.Lookup(4242)
	require.NoError(t, err)
	opens := tree.opens.Load()

	// Known pid: answered from the cache, even after the tree changed.
	tree.MapFS["4242/comm"] = &fstest.MapFile{Data: []byte("renamed\n")}
	info, err := r.Lookup(4242)
	require.NoError(t, err)
	assert.Equal(t, "python3", info.Comm)
	assert.Equal(t, opens, tree.opens.Load(), "cached lookup must not touch the tree")

	// Still reported: kept.
	r.Retain(map[uint32]struct{}{4242: {}})
	_, _ = r.Lookup(4242)
	assert.Equal(t, opens, tree.opens.Load())

	// No longer reported: dropped, so a recycled pid is read afresh.
	r.Retain(map[uint32]struct{}{})
	info, err = r.Lookup(4242)
	require.NoError(t, err)
	assert.Equal(t, "renamed", info.Comm)
	assert.Greater(t, tree.opens.Load(), opens)
}

func TestCacheIsBounded(t *testing.T) {
	r := New(testTree())
	r.mu.Lock()
	for i := range maxCached {
		r.cache[uint32(100000+i)] = Info{}
	}
	r.mu.Unlock()
	_, err := r.Lookup(4242)
	require.NoError(t, err)
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Len(t, r.cache, maxCached)
}

func BenchmarkLookupCached(b *testing.B) {
	r := New(testTree())
	if _, err := r.Lookup(4242); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Lookup(4242); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLookupUncached(b *testing.B) {
	r := New(testTree())
	live := map[uint32]struct{}{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Lookup(4242); err != nil {
			b.Fatal(err)
		}
		r.Retain(live)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

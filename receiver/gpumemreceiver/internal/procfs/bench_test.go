package procfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// dirNoLink is os.DirFS without ReadLink: the lookup cost before the exe link was read.
type dirNoLink struct{ fsys fs.FS }

func (d dirNoLink) Open(name string) (fs.File, error)    { return d.fsys.Open(name) }
func (d dirNoLink) ReadFile(name string) ([]byte, error) { return fs.ReadFile(d.fsys, name) }

// BenchmarkLookupMiss is one first sight of a process in the real /proc (this test's own):
// the exe link and the three files. The scraper pays it once per new GPU process; a seen
// pid is answered from the cache (BenchmarkLookupCached).
func BenchmarkLookupMiss(b *testing.B) {
	pid := uint32(os.Getpid())
	for _, bc := range []struct {
		name string
		fsys fs.FS
	}{{"exe_and_comm", os.DirFS("/proc")}, {"comm_only", dirNoLink{os.DirFS("/proc")}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := New(bc.fsys).Lookup(pid); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseCgroup parses every fixture in testdata/cgroup once per iteration: the
// cost of one first sight of each form, as the Reader pays it on a cache miss.
func BenchmarkParseCgroup(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("testdata", "cgroup", "*.txt"))
	if err != nil || len(files) == 0 {
		b.Fatal("no fixtures", err)
	}
	contents := make([]string, 0, len(files))
	for _, f := range files {
		c, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		contents = append(contents, string(c))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range contents {
			sinkCgroup = ParseCgroup(c)
		}
	}
}

var sinkCgroup Cgroup

package procfs

import (
	"io/fs"
	"os"
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

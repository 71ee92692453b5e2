package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArchitectureMapsEveryPackage: docs/architecture.md's "Where the code is" names every Go
// package of the repository by its path (as `path`), so a new contributor finds where each
// job lives and a new package cannot land unmapped.
func TestArchitectureMapsEveryPackage(t *testing.T) {
	text, err := os.ReadFile("architecture.md")
	require.NoError(t, err)
	doc := string(text)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var pkgs []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if len(pkgs) == 0 || pkgs[len(pkgs)-1] != rel {
				pkgs = append(pkgs, filepath.ToSlash(rel))
			}
		}
		return nil
	}))
	sort.Strings(pkgs)
	pkgs = compactStrings(pkgs)
	require.NotEmpty(t, pkgs)
	for _, p := range pkgs {
		assert.Contains(t, doc, "`"+p+"`", "docs/architecture.md does not map the package %s", p)
	}
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

package docs

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// issueRef is a reference to the team's issue tracker by number ("issue 17", "issue 17's"):
// a clone does not have it, so the contract lives in docs/ instead. Another project's issue
// cited as a source carries its repository or a '#' ("cupy issue #2241") and is not matched.
var issueRef = regexp.MustCompile(`(?i)\bissues? [0-9]+\b`)

// TestRepositoryDocumentsItself: no source file, comment, script, config or fixture points at
// the team's design notes or issue tracker; what a reader needs is in the repository.
func TestRepositoryDocumentsItself(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	self, err := filepath.Abs("selfcontained_test.go")
	require.NoError(t, err)
	links, err := filepath.Abs("links_test.go")
	require.NoError(t, err)
	checked := 0
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if path == self || path == links {
			return nil // they name what they look for
		}
		switch filepath.Ext(name) {
		case ".go", ".md", ".yaml", ".yml", ".sh", ".py", ".json", ".jsonl", ".c", ".h", ".txt", ".service", "":
		default:
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || bytes.IndexByte(src, 0) >= 0 {
			return nil // unreadable or binary
		}
		checked++
		r, _ := filepath.Rel(root, path)
		for _, n := range outsideNames {
			if bytes.Contains(src, []byte(n)) {
				t.Errorf("%s names %s, which is outside the repository", r, n)
			}
		}
		for _, m := range issueRef.FindAllIndex(src, -1) {
			line := 1 + bytes.Count(src[:m[0]], []byte("\n"))
			t.Errorf("%s:%d: %q refers to an issue by number; say what it means instead", r, line, src[m[0]:m[1]])
		}
		return nil
	}))
	assert.Greater(t, checked, 100, "the walk found the repository's files")
}

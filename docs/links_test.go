// Package docs holds the project's documentation; its test keeps the repository's markdown
// links inside the repository and pointing at files and headings that exist.
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	inlineLink  = regexp.MustCompile(`!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refLink     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	codeSpan    = regexp.MustCompile("`[^`]*`")
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	heading     = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	headingLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	urlScheme   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// The team's design notes live outside the repository: a clone does not have them.
	outsideNames = []string{"DESIGN.md", "STYLE.md", "../shared"}
)

// link is one link target in a markdown file.
type link struct {
	line   int
	target string
}

// scan returns the links of a markdown file outside code, and its anchors: the GitHub slugs
// of its headings and explicit HTML anchors.
func scan(src []byte) (links []link, anchors map[string]bool) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	fenced := ""
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		if fenced != "" {
			if strings.HasPrefix(trimmed, fenced) {
				fenced = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = trimmed[:3]
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
			anchors[m[1]] = true
		}
		if m := heading.FindStringSubmatch(text); m != nil {
			slug := slugify(m[1])
			if k := seen[slug]; k > 0 {
				anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
		text = codeSpan.ReplaceAllString(text, "")
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			links = append(links, link{n, m[1]})
		}
		if m := refLink.FindStringSubmatch(text); m != nil {
			links = append(links, link{n, m[1]})
		}
	}
	return links, anchors
}

// slugify is GitHub's heading anchor: the heading's text lower-cased, punctuation but
// hyphens and underscores dropped, spaces turned into hyphens.
func slugify(h string) string {
	h = headingLink.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"`nvidia.gpu.memory.runway`":                "nvidiagpumemoryrunway",
		"Xid log records":                           "xid-log-records",
		"memory_leak":                               "memory_leak",
		"What you must set, and why":                "what-you-must-set-and-why",
		"[deploy/README](../deploy/README.md) note": "deployreadme-note",
	} {
		assert.Equal(t, want, slugify(in), in)
	}
}

// markdownFiles lists every .md file of the repository but git's own.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	}))
	return files
}

// TestMarkdownLinks checks every relative link of every markdown file in the repository: the
// file (or folder) exists inside the repository and, for a #fragment, the heading does.
// Nothing may point at the team's design notes outside the repository.
func TestMarkdownLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	files := markdownFiles(t, root)
	require.NotEmpty(t, files)

	anchorsOf := map[string]map[string]bool{}
	linksOf := map[string][]link{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		linksOf[f], anchorsOf[f] = scan(src)
		for _, name := range outsideNames {
			if bytes.Contains(src, []byte(name)) {
				t.Errorf("%s names %s, which is outside the repository", rel(root, f), name)
			}
		}
	}
	checked := 0
	for _, f := range files {
		for _, l := range linksOf[f] {
			where := fmt.Sprintf("%s:%d: %s", rel(root, f), l.line, l.target)
			if urlScheme.MatchString(l.target) {
				continue // a web address: outside facts we cite
			}
			path, frag, _ := strings.Cut(l.target, "#")
			target := f
			if path != "" {
				if strings.HasPrefix(path, "/") {
					target = filepath.Join(root, path)
				} else {
					target = filepath.Join(filepath.Dir(f), path)
				}
				if r, err := filepath.Rel(root, target); err != nil || strings.HasPrefix(r, "..") {
					t.Errorf("%s: points outside the repository", where)
					continue
				}
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: no such file", where)
					continue
				}
			}
			checked++
			if frag == "" {
				continue
			}
			anchors, ok := anchorsOf[target]
			if !ok {
				continue // a fragment into a non-markdown file (a line number): not checked
			}
			if !anchors[strings.ToLower(frag)] {
				t.Errorf("%s: no heading #%s in %s", where, frag, rel(root, target))
			}
		}
	}
	t.Logf("%d relative links in %d markdown files resolve", checked, len(files))
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// The checker itself: a broken file, a broken anchor and a link out of the repository are
// found; code is not read as links.
func TestScan(t *testing.T) {
	links, anchors := scan([]byte("# Title\n\n## Sub `x.y`\n\nsee [a](b.md#c) and ![i](img.png \"t\")\n" +
		"`[not](a-link.md)`\n```\n[neither](x.md)\n```\n[ref]: ../out.md\n<a id=\"here\"></a>\n## Sub `x.y`\n"))
	var targets []string
	for _, l := range links {
		targets = append(targets, l.target)
	}
	assert.Equal(t, []string{"b.md#c", "img.png", "../out.md"}, targets)
	for _, a := range []string{"title", "sub-xy", "sub-xy-1", "here"} {
		assert.True(t, anchors[a], a)
	}
}

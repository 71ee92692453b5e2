package parse

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The cited corpus lives at the repository root, testdata/oom/corpus/*.jsonl: one
// public message per line with its source URL and the fields it states (the format
// is in testdata/oom/corpus/README.md). OOM_CORPUS_DIRS (colon-separated) reads
// other directories instead, to tune against a corpus being gathered elsewhere.
const corpusGlob = "../../../../testdata/oom/corpus/*.jsonl"

// Gates of the accuracy test, over the whole corpus: every OOM found and
// every stated field byte-exact (a missed or misread number is a failure,
// not a rounding of a percentage).
const (
	minRecall        = 1.0
	minFieldAccuracy = 1.0
)

// citedCase is one corpus entry.
type citedCase struct {
	ID        string `json:"id"`
	OOM       bool   `json:"oom"`
	Framework string `json:"framework"`
	Version   string `json:"version"`
	Source    string `json:"source"`
	Kind      string `json:"kind"`
	// DeviceKind is the accelerator the text names (cuda, rocm, xpu, mps,
	// metal, vulkan, npu, tpu, directml, webgpu); "" where it does not say.
	DeviceKind string           `json:"device_kind"`
	Note       string           `json:"note"`
	Text       string           `json:"text"`
	Expect     map[string]int64 `json:"expect"`
	file       string
}

// corpusFields maps the corpus's field names to what Parse returns for them.
// derived is the Result.Derived flag that marks the value as computed, not
// stated (0: always stated).
var corpusFields = []struct {
	name    string
	get     func(*Result) int64
	derived uint8
}{
	{"requested_bytes", func(r *Result) int64 { return r.RequestedBytes }, DerivedRequested},
	{"total_bytes", func(r *Result) int64 { return r.TotalBytes }, 0},
	{"free_bytes", func(r *Result) int64 { return r.FreeBytes }, 0},
	{"allocated_bytes", func(r *Result) int64 { return r.AllocatedBytes }, 0},
	{"reserved_bytes", func(r *Result) int64 { return r.ReservedBytes }, 0},
	{"process_bytes", func(r *Result) int64 { return r.ProcessBytes }, DerivedProcess},
	{"device_index", func(r *Result) int64 { return int64(r.DeviceIndex) }, 0},
}

// loadCited reads every corpus file; it returns nil when there are none.
func loadCited(tb testing.TB) []citedCase {
	tb.Helper()
	var files []string
	if dirs := os.Getenv("OOM_CORPUS_DIRS"); dirs != "" {
		for _, d := range filepath.SplitList(dirs) {
			m, _ := filepath.Glob(filepath.Join(d, "*.jsonl"))
			files = append(files, m...)
		}
	} else {
		files, _ = filepath.Glob(corpusGlob)
	}
	var out []citedCase
	seen := map[string]string{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatalf("open corpus file: %v", err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" {
				continue
			}
			var c citedCase
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				tb.Fatalf("decode %s:%d: %v", f, n, err)
			}
			c.file = filepath.Base(f)
			if prev, dup := seen[c.ID]; dup {
				tb.Errorf("corpus id %q appears in %s and %s", c.ID, prev, c.file)
			}
			seen[c.ID] = c.file
			out = append(out, c)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			tb.Fatalf("read %s: %v", f, err)
		}
	}
	return out
}

// tally is one row of the accuracy table.
type tally struct {
	ooms, recognised, lookalikes, falsePos int
	fields, exact, spurious, derived       int
}

func (t *tally) add(o tally) {
	t.ooms += o.ooms
	t.recognised += o.recognised
	t.lookalikes += o.lookalikes
	t.falsePos += o.falsePos
	t.fields += o.fields
	t.exact += o.exact
	t.spurious += o.spurious
	t.derived += o.derived
}

func (t *tally) recall() float64 { return ratio(t.recognised, t.ooms) }

// fieldAccuracy counts a stated field read exactly as right, and a stated field
// missed or misread, or a field read that the message does not state (per the
// corpus), as wrong.
func (t *tally) fieldAccuracy() float64 { return ratio(t.exact, t.fields+t.spurious) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// score parses one entry and tallies it; problems go to the returned lines.
func score(c *citedCase) (tally, []string) {
	var t tally
	var problems []string
	got, ok := Parse(c.Text)
	if !c.OOM {
		t.lookalikes = 1
		// A pinned host allocation failure (device_kind "host") may be
		// reported as one, never as a GPU OOM.
		if ok && !(c.DeviceKind == DeviceHost && got.DeviceKind == DeviceHost) {
			t.falsePos = 1
			problems = append(problems, fmt.Sprintf("%s (%s): look-alike (%s) recognised as %s", c.ID, c.file, c.Kind, got.Framework))
		}
		return t, problems
	}
	t.ooms = 1
	if !ok {
		problems = append(problems, fmt.Sprintf("%s (%s): OOM not recognised", c.ID, c.file))
		return t, problems
	}
	t.recognised = 1
	if c.DeviceKind != "" {
		t.fields++
		if got.DeviceKind == c.DeviceKind {
			t.exact++
		} else {
			problems = append(problems, fmt.Sprintf("%s (%s): device kind %q, want %q", c.ID, c.file, got.DeviceKind, c.DeviceKind))
		}
	}
	for _, f := range corpusFields {
		want, stated := c.Expect[f.name]
		v := f.get(&got)
		switch {
		case stated:
			t.fields++
			if v == want {
				t.exact++
			} else {
				problems = append(problems, fmt.Sprintf("%s (%s): %s = %d, want %d", c.ID, c.file, f.name, v, want))
			}
		case v >= 0 && got.Derived&f.derived != 0:
			// Computed from the message (a tensor's shape, the only process
			// that can be the failing one), flagged as such: counted apart.
			t.derived++
		case v >= 0:
			t.spurious++
			problems = append(problems, fmt.Sprintf("%s (%s): %s = %d, not stated by the corpus", c.ID, c.file, f.name, v))
		}
	}
	return t, problems
}

// TestCitedCorpusAccuracy scores the recogniser on every cited message: per
// framework, recall over the OOMs, false positives over the look-alikes, and
// byte-exact field accuracy over the fields each message states. It prints the
// table and fails on any OOM missed, any false positive, or any stated field
// not read byte-exact (over the whole corpus; the table shows where).
func TestCitedCorpusAccuracy(t *testing.T) {
	cases := loadCited(t)
	if len(cases) == 0 {
		t.Skipf("no corpus files at %s", corpusGlob)
	}
	rows := map[string]*tally{}
	var total tally
	var problems []string
	for i := range cases {
		c := &cases[i]
		if c.Source == "" || c.Text == "" || c.Framework == "" {
			t.Errorf("%s (%s): entry without source, text or framework", c.ID, c.file)
		}
		s, p := score(c)
		if rows[c.Framework] == nil {
			rows[c.Framework] = &tally{}
		}
		rows[c.Framework].add(s)
		total.add(s)
		problems = append(problems, p...)
	}
	t.Log("\n" + accuracyTable(rows, total))
	for _, p := range problems {
		t.Log(p)
	}
	if r := total.recall(); r < minRecall {
		t.Errorf("recall %.2f%% below %.0f%%", 100*r, 100*minRecall)
	}
	if total.falsePos > 0 {
		t.Errorf("%d false positives", total.falsePos)
	}
	if a := total.fieldAccuracy(); a < minFieldAccuracy {
		t.Errorf("field accuracy %.2f%% below %.0f%%", 100*a, 100*minFieldAccuracy)
	}
}

// accuracyTable renders the per-framework table in Markdown.
func accuracyTable(rows map[string]*tally, total tally) string {
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| framework | OOMs | recognised | recall | look-alikes | false pos. | fields | exact | extra | derived | field acc. |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(name string, t *tally) {
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f%% | %d | %d | %d | %d | %d | %d | %.1f%% |\n", name, t.ooms, t.recognised,
			100*t.recall(), t.lookalikes, t.falsePos, t.fields, t.exact, t.spurious, t.derived, 100*t.fieldAccuracy())
	}
	for _, n := range names {
		row(n, rows[n])
	}
	row("**all**", &total)
	return b.String()
}

package kmsg

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseRecord checks that ParseRecord never panics, fails only with
// ErrMalformed, and keeps its invariants.
func FuzzParseRecord(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", "records.kmsg"))
	if err != nil {
		f.Fatal(err)
	}
	// Seed one record per header line, with its dictionary lines.
	var rec []byte
	for _, line := range bytes.SplitAfter(data, []byte{'\n'}) {
		if len(line) > 0 && line[0] == ' ' {
			rec = append(rec, line...)
			continue
		}
		if len(rec) > 0 {
			f.Add(rec)
		}
		rec = append([]byte(nil), line...)
	}
	f.Add(rec)
	for _, m := range malformedRecords {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRecord(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if r.Level < 0 || r.Level > 7 || r.Facility < 0 || r.Monotonic < 0 {
			t.Fatalf("out of range: %+v", r)
		}
		if !bytes.Contains(b, []byte(";")) {
			t.Fatalf("accepted a record without ';'")
		}
		if strings.Contains(r.Text, "\n") && !bytes.Contains(b, []byte(`\x0a`)) && !bytes.Contains(b, []byte(`\x0A`)) {
			t.Fatalf("newline in Text that was not escaped: %q", r.Text)
		}
		for k := range r.Dict {
			if k == "" {
				t.Fatalf("empty dictionary key")
			}
		}
	})
}

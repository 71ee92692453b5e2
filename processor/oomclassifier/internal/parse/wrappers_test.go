package parse

import (
	"encoding/json"
	"reflect"
	"testing"
)

// wrappers are the prefixes log shippers and launchers put in front of a
// line (CRI, a rank tag, a worker tag, a logger, ANSI colours, compose) and
// what they put after it. None changes the message's own bytes.
var wrappers = []struct{ prefix, suffix string }{
	{"2024-05-01T10:00:00.123456789Z stderr F ", ""},
	{"[rank3]: ", ""},
	{"(VllmWorker rank=1 pid=4242) ERROR 05-01 10:00:00 [worker.py:88] ", ""},
	{"E0501 10:00:00.123456  4242 runner.cc:42] ", " [while running step 17]"},
	{"Job failed: ", "\n"},
	{"\x1b[1;31mERROR\x1b[0m ", "\x1b[0m"},
	{"worker-7 | ", " | exit code 1"},
}

// jsonLine is the message as a JSON logger writes it, escaped inside a
// string (Go's encoder also escapes '<', '>' and '&' as \u003c…).
func jsonLine(text string) string {
	q, _ := json.Marshal(text)
	return `{"level":"error","ts":"2024-05-01T10:00:00.123Z","msg":` + string(q) + `}`
}

// Every cited OOM must read the same inside each wrapper: a known message in
// an unknown wrapper is still the known message.
func TestCitedOOMsInWrappers(t *testing.T) {
	for _, c := range loadCited(t) {
		if !c.OOM {
			continue
		}
		want, ok := Parse(c.Text)
		if !ok {
			continue // TestCitedCorpusAccuracy reports it
		}
		for _, w := range append(wrappers, struct{ prefix, suffix string }{"json", ""}) {
			wrapped := w.prefix + c.Text + w.suffix
			if w.prefix == "json" {
				wrapped = jsonLine(c.Text)
			}
			got, ok := Parse(wrapped)
			if !ok {
				t.Errorf("%s in %q…%q: not recognised", c.ID, w.prefix, w.suffix)
				continue
			}
			got.Stack, want.Stack = "", "" // a wrapper may name the stack (VllmWorker)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s in %q…%q:\n got  %+v\n want %+v", c.ID, w.prefix, w.suffix, got, want)
			}
		}
	}
}

// No look-alike may become an OOM inside a wrapper (a pinned host one may be
// read as device kind host, as in TestCitedCorpusAccuracy).
func TestCitedLookalikesInWrappers(t *testing.T) {
	for _, c := range loadCited(t) {
		if c.OOM {
			continue
		}
		texts := []string{jsonLine(c.Text)}
		for _, w := range wrappers {
			texts = append(texts, w.prefix+c.Text+w.suffix)
		}
		for _, text := range texts {
			if r, ok := Parse(text); ok && !(c.DeviceKind == DeviceHost && r.DeviceKind == DeviceHost) {
				t.Errorf("%s: look-alike recognised as %s in %q", c.ID, r.Framework, text)
			}
		}
	}
}

func TestJSONUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`a\nb`:            "a\nb",
		`\"x\" \\ \/`:     `"x" \ /`,
		`\u003c= \u0026`:  "<= &",
		`C:\x \u12`:       `C:\x \u12`,       // not escapes: kept
		`memor\u0079`:     `memor\u0079`,     // no encoder escapes a letter
		`Dst\u0020tensor`: `Dst\u0020tensor`, // nor a space
		`a\u00e9\u0001`:   "a\u00e9\u0001",
		`end\`:            `end\`,
	} {
		got, _ := jsonUnescape(in)
		if got != want {
			t.Errorf("jsonUnescape(%q) = %q, want %q", in, got, want)
		}
	}
	if _, changed := jsonUnescape(`no escapes \q`); changed {
		t.Error("reported a change without an escape")
	}
}

// A sentence's full stop or a colour reset right after a name or a count
// ends it.
func TestNamesAndCountsEndAtPunctuation(t *testing.T) {
	for text, want := range map[string]int64{
		"ResourceExhaustedError: OOM when allocating tensor of shape [4096] and type float.":               16384,
		"ResourceExhaustedError: OOM when allocating tensor of shape [4096] and type float\x1b[0m":         16384,
		"BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 1024.":       1024,
		"BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 1024\x1b[0m": 1024,
	} {
		r, ok := Parse(text)
		if !ok || r.RequestedBytes != want {
			t.Errorf("%q: requested %d (ok %v), want %d", text, r.RequestedBytes, ok, want)
		}
	}
}

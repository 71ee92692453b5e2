package parse

import (
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
		for _, w := range wrappers {
			got, ok := Parse(w.prefix + c.Text + w.suffix)
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

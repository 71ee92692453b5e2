package parse

import "testing"

// A failure phrase that a repair verb just before it takes as its object is a
// change described (a pull request's title, a changelog entry), not a
// report; the same phrase with the verb further away, or no verb, is read.
func TestChangeEntry(t *testing.T) {
	for _, c := range []struct {
		sentence string
		want     bool
	}{
		{"Fix GPU ", true},            // the cited pull request title's words before "CUDA out of memory"
		{"fix ", true},                // any case
		{"FIXED: ", true},             // punctuation after the verb
		{"Resolving the ", true},      // third word back: "Resolving", "the" then the phrase
		{"Handle a big ", true},       // third word back
		{"Handle a very big ", false}, // fourth word back: out of reach
		{"Job failed: Fix GPU ", true},
		{"{\"msg\":\"Fix GPU ", true},
		{"Fixture GPU ", false}, // a longer word is not the verb
		{"prefix GPU ", false},  // nor a word ending in it
		{"RuntimeError: ", false},
		{"", false},
		{"  ", false},
		{"12 34 ", false}, // no letters: no word
		{"catches ", true},
		{"mitigates ", true},
	} {
		if got := changeEntry(c.sentence); got != c.want {
			t.Errorf("changeEntry(%q) = %v, want %v", c.sentence, got, c.want)
		}
	}
	for _, c := range []struct {
		text string
		oom  bool
	}{
		{"Fix GPU CUDA out of memory error when workers_per_replica > 1", false},
		{"[v1.2] fixed CUDA out of memory in the sampler", false},
		{"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)", true},
	} {
		if _, ok := Parse(c.text); ok != c.oom {
			t.Errorf("Parse(%q) recognised %v, want %v", c.text, ok, c.oom)
		}
	}
}

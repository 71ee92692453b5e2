package parse

import "testing"

// Edges of the JSON unescaping and the line unwrapping: each escape, the
// \u range limits, escapes at either end of the text, and text kept as is
// after the first change.
func TestJSONUnescapeEdges(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		changed  bool
	}{
		{`\n`, "\n", true},
		{`a\tb\rc`, "a\tb\rc", true},
		{`a\bb\fc`, "a b c", true}, // backspace and form feed read as spaces
		{`\u0000`, "\x00", true},   // NUL, the escape of rune 0
		{`\u001f`, "\x1f", true},   // the last control character
		{`\u007e`, `\u007e`, false},
		{`\u007f`, "\x7f", true},
		{`\u0022\u0027\u003d\u003e`, `"'=>`, true},
		{`x\u003c`, "x<", true},     // a \u escape ending the text
		{`x\u003`, `x\u003`, false}, // one digit short
		{`\u003cx\u003`, `<x\u003`, true},
		{`\u003cx`, "<x", true},
		{`a\nb\qc`, "a\nb\\qc", true}, // an unknown escape after a change is kept
		{`a\nb\`, "a\nb\\", true},     // and so is a final backslash
		{`\\n`, `\n`, true},           // an escaped backslash, then a plain n
		{`\zz`, `\zz`, false},
		{`\u00zz`, `\u00zz`, false},
	} {
		got, changed := jsonUnescape(tt.in)
		if got != tt.want || changed != tt.changed {
			t.Errorf("jsonUnescape(%q) = %q, %v; want %q, %v", tt.in, got, changed, tt.want, tt.changed)
		}
	}
}

func TestUnwrapEdges(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"a\nb", "a b"},
		{"a \n  b", "a b"},
		{"a\r\nb", "a b"},
		{"a\n\nb", "a\n\nb"},
		{"a \n \n b", "a\n\nb"},
		{"a  b", "a  b"},   // spaces without a break stay
		{"a\t b", "a\t b"}, // and tabs
		{"\na", " a"},
		{"a\n", "a "},
		{"a\rb", "a\rb"}, // a lone carriage return is no break
		{"", ""},
	} {
		if got := unwrap(tt.in); got != tt.want {
			t.Errorf("unwrap(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestRecogniseUnescapedEdges(t *testing.T) {
	if _, ok, _ := recogniseUnescaped("CUDA out of memory. Tried to allocate 2.00 MiB"); ok {
		t.Error("a text without escapes is read again")
	}
	// The numbers sit across an escaped line break: read unwrapped.
	r, ok, _ := recogniseUnescaped(`CUDA out of memory. Tried to allocate\n 2.00 MiB (GPU 0; 4.00 GiB total capacity)`)
	if !ok || r.RequestedBytes != 2<<20 {
		t.Errorf("escaped break: ok %v, requested %d; want %d", ok, r.RequestedBytes, 2<<20)
	}
	r, ok, _ = recogniseUnescaped(`CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity) \"x\"`)
	if !ok || r.RequestedBytes != 2<<20 {
		t.Errorf("escaped quote: ok %v, requested %d; want %d", ok, r.RequestedBytes, 2<<20)
	}
}

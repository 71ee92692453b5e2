package parse

import (
	"strconv"
	"strings"
)

// The text as shippers deliver it is brought back to the message as the
// framework printed it: line breaks a terminal or paste added, JSON escapes
// a JSON log line added. Parse reads both forms.

// recogniseUnescaped recognises text with its JSON escapes undone, line
// breaks read as in Parse; blanked reports that structure.go blanked part of
// the unescaped text.
func recogniseUnescaped(text string) (r Result, ok, blanked bool) {
	u, changed := jsonUnescape(text)
	if !changed {
		return absent, false, false
	}
	// The escaped line breaks are line breaks now: read the structure again.
	u, blanked = reportText(u, "")
	if r, ok := recognisePinned(u); ok {
		return r, true, blanked
	}
	if strings.IndexByte(u, '\n') >= 0 {
		if r, ok := recognise(unwrap(u)); ok {
			return r, true, blanked
		}
	}
	r, ok = recognise(u)
	return r, ok, blanked
}

// jsonUnescape replaces JSON string escapes (\n \t \r \" \\ \/ \b \f
// \uXXXX) by what they stand for; any other backslash stays. A \u escape
// is undone only for what encoders escape (control characters, non-ASCII,
// and HTML-safe encoders' < > & ' = "): undoing one of a letter or a space,
// which none writes, could make a key word the prefilter did not see. It
// reports whether anything changed.
func jsonUnescape(text string) (string, bool) {
	var b strings.Builder
	changed := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' || i+1 == len(text) {
			if changed {
				b.WriteByte(c)
			}
			continue
		}
		var rep rune = -1
		n := 2
		switch text[i+1] {
		case 'n':
			rep = '\n'
		case 't':
			rep = '\t'
		case 'r':
			rep = '\r'
		case '"', '\\', '/':
			rep = rune(text[i+1])
		case 'b', 'f':
			rep = ' '
		case 'u':
			if i+6 <= len(text) {
				if v, err := strconv.ParseUint(text[i+2:i+6], 16, 32); err == nil && (v < 0x20 || v >= 0x7f || strings.IndexByte(`<>&'="`, byte(v)) >= 0) {
					rep, n = rune(v), 6
				}
			}
		}
		if rep < 0 {
			if changed {
				b.WriteByte(c)
			}
			continue
		}
		if !changed {
			b.Grow(len(text))
			b.WriteString(text[:i])
			changed = true
		}
		b.WriteRune(rep)
		i += n - 1
	}
	if !changed {
		return text, false
	}
	return b.String(), true
}

// maxUnwrap bounds the text Parse copies to unwrap: messages are a few KiB.
const maxUnwrap = 64 << 10

// unwrap replaces each line break, with the spaces and tabs around it, by one
// space; a blank line (two breaks) stays a break, as it ends a paragraph.
func unwrap(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		c := text[i]
		if c != '\n' && c != '\r' && c != ' ' && c != '\t' {
			b.WriteByte(c)
			i++
			continue
		}
		j, breaks := i, 0
		for j < len(text) && (text[j] == '\n' || text[j] == '\r' || text[j] == ' ' || text[j] == '\t') {
			if text[j] == '\n' {
				breaks++
			}
			j++
		}
		switch {
		case breaks == 0:
			b.WriteString(text[i:j])
		case breaks == 1:
			b.WriteByte(' ')
		default:
			b.WriteString("\n\n")
		}
		i = j
	}
	return b.String()
}

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
//
// Two repairs undo a console's hard wrap, which breaks a long line at the
// terminal's width wherever that falls, even inside a word or a number:
//
//   - a torchrun rank tag ("[rank0]: ") that starts the text and repeats at
//     the start of a continuation line is dropped there;
//   - a bare break (no space on either side) between the two halves of a
//     size's number ("1.0" / "2 GiB", the unit right after), of a size and
//     its unit ("1.02G" / "iB") or of
//     a word of the allocators' templates ("PyTo" / "rch") joins them
//     without a space. Any other break reads as a space: "of" / "which"
//     stays two words, and a number is never made of two that a space
//     separated.
func unwrap(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	rank := rankTag(text)
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
		bare := breaks == 1 && i > 0 && strings.Trim(text[i:j], "\r\n") == ""
		if breaks == 1 && rank != "" && strings.HasPrefix(text[j:], rank) {
			j += len(rank)
			bare = bare && j < len(text) && text[j] != ' '
		}
		switch {
		case breaks == 0:
			b.WriteString(text[i:j])
		case breaks == 1 && bare && j < len(text) && wrapSplit(text, i, j):
			// joined: the break fell inside a token
		case breaks == 1:
			b.WriteByte(' ')
		default:
			b.WriteString("\n\n")
		}
		i = j
	}
	return b.String()
}

// rankTag returns the torchrun tag that starts text ("[rank3]: " or
// "[rank3]:"), or "".
func rankTag(text string) string {
	if !strings.HasPrefix(text, "[rank") {
		return ""
	}
	e := strings.Index(text, "]:")
	if e < 6 || e > 12 {
		return ""
	}
	for k := len("[rank"); k < e; k++ {
		if !isDigit(text[k]) {
			return ""
		}
	}
	e += len("]:")
	if e < len(text) && text[e] == ' ' {
		e++
	}
	return text[:e]
}

// wrapWords are the words of the allocators' templates that a hard wrap may
// split; a break inside one of them is joined.
var wrapWords = [...]string{
	"OutOfMemoryError", "PyTorch", "non-PyTorch", "allocated", "unallocated", "allocate", "capacity", "reserved",
	"memory", "Memory", "process", "Process", "Including", "which", "total", "Tried", "private", "pools", "Graphs",
	"allowed", "documentation", "Management", "fragmentation", "expandable_segments", "PYTORCH_CUDA_ALLOC_CONF",
}

// wrapSplit reports whether the bare break text[i:j] (a line break alone)
// splits one token: the halves of a number, a size and its unit, or a
// template word.
func wrapSplit(text string, i, j int) bool {
	l, r := text[i-1], text[j]
	if l == ' ' || r == ' ' || l == '\t' {
		return false
	}
	ls := i
	for ls > 0 && !isSpaceByte(text[ls-1]) {
		ls--
	}
	re := j
	for re < len(text) && !isSpaceByte(text[re]) {
		re++
	}
	word := strings.Trim(text[ls:i]+text[j:re], ",.;:()")
	if isDigit(l) && (isDigit(r) || r == '.') || l == '.' && i-2 >= 0 && isDigit(text[i-2]) && isDigit(r) {
		// Only a size: the joined number must be followed by its unit
		// ("1.0" / "2 GiB"); a count or a byte total at a line's end
		// followed by the next line's timestamp ("12790923264" /
		// "2019-01-…") stays two.
		ne := numberEnd(text, j)
		u := ne
		if u < len(text) && text[u] == ' ' {
			u++
		}
		ue := u
		for ue < len(text) && isLetter(text[ue]) {
			ue++
		}
		_, unit := unitMultiplier(text[u:ue])
		return unit && ue > u
	}
	if isLetter(r) && isDigit(word[0]) {
		// A size split inside or before its unit ("1.02G" / "iB").
		ne := numberEnd(word, 0)
		if u, ok := unitMultiplier(word[ne:]); ok && u > 0 && ne < i-ls {
			return true
		}
	}
	for _, w := range wrapWords {
		if word == w {
			return true
		}
	}
	return false
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

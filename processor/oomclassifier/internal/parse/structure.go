package parse

import "strings"

// The recognisers below this file know what a failure looks like; this file
// knows where a text is not reporting one. A message a library printed sits
// in a log line, an exception frame or the library's own template; the same
// words also sit in text that only talks about them: documentation headings
// and lists, code that watches for OOMs, and other reporters' lines about
// host memory. Before any recogniser reads a text, reportText blanks those
// parts of a copy of it (the record's body is never changed), so that every
// recogniser sees only what could be a report and a token that names a
// host never counts as device context:
//
//   - host-memory reporters' lines: Slurm's srun/slurmstepd lines ("srun:
//     error: gpu001: task 0: Out Of Memory", "Detected 1 oom_kill event"),
//     the kernel's lines (a dmesg "[ seconds]" or syslog "… <host> kernel:"
//     prefix: the OOM killer, memcg kills, oom_reaper), except the GPU
//     driver's own (NVRM, nvidia, amdgpu);
//   - host and node names: the values of node=, nodename=, host= and
//     hostname= fields, and the record's own host.name where it stands as a
//     whole name (ParseOnHost), filled with '_';
//   - documentation markup: Markdown headings ("# …"), reStructuredText
//     headings (a line underlined with ---/===), and list items ("- ",
//     "* ", "+ ", "1. ", "#. ") that name an OOM in prose; a list item that
//     starts with an error frame ("- RuntimeError: …", ComfyUI's
//     "- **Exception Message:** …") is a report and is kept;
//   - code: inline code spans (`…`) that name an OOM, source lines that
//     test for one (except, if, elif, or, and, return, assert, catch,
//     isinstance( …), and string literals that name one and are tested
//     (`"out of memory" in msg`), raw or compiled as a regex, or hold a
//     regex alternation.
//
// What is left keeps its line breaks and byte offsets, so the recognisers
// read their numbers from it exactly as from the original.

// reportText returns text with its non-report parts blanked (spaces, line
// breaks kept), and whether anything was blanked. host is the record's
// host.name, or "".
func reportText(text, host string) (string, bool) {
	if !mayNeedBlanking(text, host) {
		return text, false
	}
	var b []byte // copy of text, made at the first blanking
	fill := func(from, to int, c byte) {
		if b == nil {
			b = []byte(text)
		}
		for k := from; k < to; k++ {
			if b[k] != '\n' && b[k] != '\r' {
				b[k] = c
			}
		}
	}
	blank := func(from, to int) { fill(from, to, ' ') }
	pasted := false // inside a run of commented lines that starts with a frame
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := text[start:end]
		next := ""
		if end < len(text) {
			n := strings.IndexByte(text[end+1:], '\n')
			if n < 0 {
				next = text[end+1:]
			} else {
				next = text[end+1 : end+1+n]
			}
		}
		heading, framed := headingLine(line, next)
		if framed {
			// A message pasted behind comment marks: its following
			// commented lines continue it.
			pasted = true
		} else if !heading {
			pasted = false
		}
		switch {
		case heading && pasted:
			// kept: a continuation of the pasted message
		case hostReporterLine(line), heading,
			proseListItem(line) && (oomWordIn(line) || containsFold(line, "memory")), codeLine(line) && oomWordIn(line), testedLiteral(line):
			blank(start, end)
		default:
			if strings.IndexByte(line, '`') >= 0 {
				for _, s := range codeSpans(line) {
					blank(start+s[0], start+s[1])
				}
			}
			if host != "" || strings.IndexByte(line, '=') >= 0 {
				// '_', not spaces: a host's name blanked must not leave
				// markup behind ("#gpu01 …" is no heading).
				for _, s := range hostTokens(line, host) {
					fill(start+s[0], start+s[1], '_')
				}
			}
		}
		start = end + 1
	}
	if b == nil {
		return text, false
	}
	return string(b), true
}

// mayNeedBlanking is reportText's cheap test: false when the text holds none
// of the marks the blanking looks for.
func mayNeedBlanking(text, host string) bool {
	for _, c := range [...]byte{'`', '#', '|', '='} {
		if strings.IndexByte(text, c) >= 0 {
			return true
		}
	}
	if host != "" && len(host) >= 3 && strings.Contains(text, host) {
		return true
	}
	for _, m := range [...]string{"srun", "slurmstepd", "kernel:", "] ", "- ", "* ", "+ ", "• ", " in ", "except", "isinstance(", "re.", "===", "---", "~~~"} {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// oomWords are the folded words by which prose and code name an OOM.
var oomWords = [...]string{"out of memory", "out-of-memory", "outofmemory", "out_of_memory", "oom", "alloc", "not enough memory", "dst tensor", "exhausted", "insufficient"}

// oomWordIn reports whether s names an OOM (any case).
func oomWordIn(s string) bool {
	for _, w := range oomWords {
		if containsFold(s, w) {
			return true
		}
	}
	return false
}

// hostReporterLine reports a line written by a reporter of host memory:
// Slurm's srun or slurmstepd (behind any wrapper's prefix), or the kernel
// (a dmesg timestamp or a syslog/journal "… kernel:" header), but not the
// GPU driver's kernel lines.
func hostReporterLine(line string) bool {
	// Anchored on ':' and 'k', rarer than the 's' and ' ' the names start with.
	for from := 0; ; {
		i := indexFrom(line, ": error: ", from)
		if i < 0 {
			break
		}
		if strings.HasSuffix(line[:i], "srun") || strings.HasSuffix(line[:i], "slurmstepd") {
			return true
		}
		from = i + 1
	}
	k := strings.Index(line, "kernel: ")
	if k > 0 && line[k-1] == ' ' {
		k--
	} else {
		k = -1
	}
	dmesg := dmesgPrefix(line)
	if k < 0 && !dmesg {
		return false
	}
	if k >= 0 && !dmesg && !timeBefore(line[:k]) {
		return false
	}
	for _, d := range [...]string{"NVRM", "nvidia", "amdgpu", "Xid"} {
		if strings.Contains(line, d) {
			return false
		}
	}
	return true
}

// dmesgPrefix reports a line that starts with dmesg's "[ seconds.micros]"
// or its human form "[Fri Sep 16 10:37:38 2022]" (a weekday and a month
// name around the time): not the "[19:45:05]" or "[2026-02-24T20:21:58Z]"
// stamps other loggers write.
func dmesgPrefix(line string) bool {
	if len(line) < 4 || line[0] != '[' {
		return false
	}
	e := strings.IndexByte(line, ']')
	if e < 2 || e > 40 {
		return false
	}
	stamp := strings.TrimSpace(line[1:e])
	if dot := strings.IndexByte(stamp, '.'); dot > 0 && dot < len(stamp)-1 {
		for k := 0; k < len(stamp); k++ {
			if c := stamp[k]; !isDigit(c) && c != '.' {
				return false
			}
		}
		return true
	}
	return len(stamp) >= 20 && isLetter(stamp[0]) && strings.Count(stamp, " ") >= 3 && timeBefore(stamp)
}

// timeBefore reports an hh:mm:ss time in s (a syslog or journal header).
func timeBefore(s string) bool {
	for k := 2; k+6 <= len(s); k++ {
		if s[k] == ':' && s[k+3] == ':' && isDigit(s[k-1]) && isDigit(s[k-2]) && isDigit(s[k+1]) && isDigit(s[k+2]) && isDigit(s[k+4]) && isDigit(s[k+5]) {
			return true
		}
	}
	return false
}

// boundaries end the prefixes shippers and launchers put before a line
// (CRI's "… stderr F ", "[rank3]: ", a glog or vLLM "…] ", "Job failed: ",
// an ANSI colour's "…m ", compose's "worker-7 | ", a JSON logger's
// "msg":"): the line's own content may start after any of them.
var boundaries = [...]string{"] ", ": ", "| ", "m ", "F ", ":\""}

// starts returns where the line's content may start: 0 and after each
// boundary in its first 200 bytes (at most 16 of them), without allocating.
func starts(line string) (at [17]int, n int) {
	n = 1
	head := line[:min(len(line), 200)]
	for _, b := range boundaries {
		for k := 0; n < len(at); {
			i := strings.Index(head[k:], b)
			if i < 0 {
				break
			}
			k += i + len(b)
			at[n] = k
			n++
		}
	}
	return at, n
}

// headingLine reports a Markdown heading ("#", "##" … then a space; a
// Python or shell comment reads the same way) or a reStructuredText one
// (next is a line of at least three '-', '=' or '~' and nothing else), and
// whether it is instead a message pasted behind comment marks ("#
// RuntimeError: CUDA out of memory. Tried to allocate …": it starts with its
// frame), which is no heading.
func headingLine(line, next string) (heading, framed bool) {
	if strings.Contains(line, "# ") {
		at, n := starts(line)
		for _, p := range at[:n] {
			t := strings.TrimLeft(line[p:], " \t")
			if h := strings.TrimLeft(t, "#"); len(h) < len(t) && len(t)-len(h) <= 6 && strings.HasPrefix(h, " ") {
				if frameStart(h) {
					return false, true
				}
				return true, false
			}
		}
	}
	n := strings.TrimSpace(next)
	if len(n) < 3 || strings.TrimSpace(line) == "" {
		return false, false
	}
	for k := 0; k < len(n); k++ {
		if n[k] != n[0] || (n[0] != '-' && n[0] != '=' && n[0] != '~') {
			return false, false
		}
	}
	return true, false
}

// listMarker returns the list item's content (after "- ", "* ", "+ ", "• ",
// "1. ", "1) ", "#. "), and whether the line is one.
func listMarker(line string) (string, bool) {
	if item, ok := listMarkerAt(line); ok {
		return item, true
	}
	// Behind a wrapper's prefix: the bulleted markers only (a numbered
	// item is read at the line's start), and only if the line holds one.
	if !containsAny(line, "- ", "* ", "+ ", "• ", "#. ") {
		return "", false
	}
	at, n := starts(line)
	for _, p := range at[1:n] {
		if item, ok := listMarkerAt(line[p:]); ok {
			return item, true
		}
	}
	return "", false
}

// listMarkerAt is listMarker for content that starts at line's start.
func listMarkerAt(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t>")
	for _, m := range [...]string{"- ", "* ", "+ ", "• ", "#. "} {
		if strings.HasPrefix(t, m) {
			return t[len(m):], true
		}
	}
	d := 0
	for d < len(t) && d < 3 && isDigit(t[d]) {
		d++
	}
	if d > 0 && d+1 < len(t) && (t[d] == '.' || t[d] == ')') && t[d+1] == ' ' {
		return t[d+2:], true
	}
	return "", false
}

// proseListItem reports a list item that does not start with an error frame:
// "- I get `CUDA out of memory` errors", "- If it runs out of device
// memory…", not "- RuntimeError: CUDA out of memory" or ComfyUI's "-
// **Exception Message:** HIP out of memory".
func proseListItem(line string) bool {
	item, ok := listMarker(line)
	if !ok {
		return false
	}
	return !frameStart(item)
}

// frameStart reports text (a list item's or heading's content) that starts
// with an error frame or a field: a label of at most three words and 40 bytes
// (letters, digits, spaces, '.', '_', '-') then ": " (RuntimeError:,
// torch.OutOfMemoryError:, ComfyUI's "**Exception Message:**", XGBoost's
// "- Free memory: 8126464"), not prose that quotes one later ("Error message
// "RuntimeError: …" was printed", "update the lib to catch RuntimeError: …").
func frameStart(item string) bool {
	item = strings.TrimLeft(item, "*_ ")
	c := strings.IndexByte(item, ':')
	if c <= 0 || c > 40 || (c+1 < len(item) && item[c+1] != ' ' && item[c+1] != '*') {
		return false
	}
	words := 1
	for k := 0; k < c; k++ {
		ch := item[k]
		if ch == ' ' {
			words++
		}
		if !isLetter(ch) && !isDigit(ch) && ch != ' ' && ch != '.' && ch != '_' && ch != '-' && ch != '*' {
			return false
		}
	}
	return words <= 3
}

// codeKeywords start source lines that test for an OOM rather than report
// one; commentMarks start comments on one.
var (
	codeKeywords = [...]string{"except ", "except(", "if ", "if(", "elif ", "or ", "and ", "return ", "assert ", "catch ", "catch(", "} catch", "isinstance(", "case "}
	commentMarks = [...]string{"//", "/*", "* "}
)

// codeLine reports a source line that starts like one that tests for an OOM
// (and has code's punctuation: a block's ':' or '{' at its end, a call's
// '(', a literal's quote, a comparison) or a comment (the caller checks that
// it names an OOM). A hard-wrapped message's "and 360.11 MiB is reserved by
// PyTorch but unallocated." starts with a keyword but is prose.
func codeLine(line string) bool {
	// At the line's start only: after a boundary inside a message ("shape[…]
	// and type float") the same words are prose.
	t := strings.TrimSpace(line)
	for _, k := range commentMarks {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	for _, k := range codeKeywords {
		if strings.HasPrefix(t, k) {
			return strings.HasSuffix(t, ":") || strings.HasSuffix(t, "{") || strings.ContainsAny(t, "(\"'") ||
				strings.Contains(t, "==") || strings.Contains(t, "!=")
		}
	}
	return false
}

// testedLiteral reports a quoted literal in line that names an OOM and is
// code: followed by " in " / " not in ", prefixed r or compiled, or holding
// a '|' alternation.
func testedLiteral(line string) bool {
	if strings.IndexByte(line, '"') < 0 && strings.IndexByte(line, '\'') < 0 {
		return false
	}
	for k := 0; k < len(line); k++ {
		q := line[k]
		if q != '"' && q != '\'' {
			continue
		}
		e := strings.IndexByte(line[k+1:], q)
		if e < 0 {
			return false
		}
		e += k + 1
		lit := line[k+1 : e]
		if oomWordIn(lit) {
			after := line[e+1:]
			before := line[:k]
			if strings.HasPrefix(after, " in ") || strings.HasPrefix(after, " not in ") ||
				alternation(lit) || strings.HasSuffix(before, "r") && (len(before) == 1 || !isLetter(before[len(before)-2])) ||
				strings.HasSuffix(before, "compile(") || strings.HasSuffix(before, "search(") || strings.HasSuffix(before, "MustCompile(") {
				return true
			}
		}
		k = e
	}
	return false
}

// alternation reports a regex alternation in lit: a '|' between a letter
// or ')' and a letter or '(' ("out of memory|OOM", "(CUDA|HIP) out of
// memory"), not a C expression's " || " nor a progress bar's "99%|▉|".
func alternation(lit string) bool {
	for k := 1; k+1 < len(lit); k++ {
		if lit[k] == '|' && (isLetter(lit[k-1]) || lit[k-1] == ')') && (isLetter(lit[k+1]) || lit[k+1] == '(') {
			return true
		}
	}
	return false
}

// codeSpans returns the inline code spans of line (between runs of
// backticks) that name an OOM in prose: the phrase alone (`out of
// memory`), not a pasted message (`RuntimeError: CUDA out of memory. Tried
// to allocate 64.00 MiB …`, which has a frame's ':' or a number) nor a
// status code (`CUFFT_ALLOC_FAILED`).
func codeSpans(line string) [][2]int {
	var out [][2]int
	for k := 0; k < len(line); {
		o := strings.IndexByte(line[k:], '`')
		if o < 0 {
			break
		}
		o += k
		run := o
		for run < len(line) && line[run] == '`' {
			run++
		}
		c := strings.Index(line[run:], line[o:run])
		if c < 0 {
			break
		}
		c += run
		if span := line[run:c]; proseOOM(span) && !strings.ContainsAny(span, ":0123456789") {
			out = append(out, [2]int{run, c})
		}
		k = c + (run - o)
	}
	return out
}

// proseOOM reports the phrases by which prose names an OOM (any case).
func proseOOM(s string) bool {
	return containsFold(s, "out of memory") || containsFold(s, "out-of-memory") || containsFold(s, "not enough memory")
}

// hostFields name a host in key=value form.
var hostFields = [...]string{"node=", "nodename=", "host=", "hostname=", "node_name=", "host_name="}

// hostTokens returns the spans of line that name a host: hostFields' values
// and occurrences of the record's own host.name.
func hostTokens(line, host string) [][2]int {
	var out [][2]int
	// hostFields' values: found from each '=' back to the field's name.
	for k := 0; ; {
		i := strings.IndexByte(line[k:], '=')
		if i < 0 {
			break
		}
		i += k + 1
		k = i
		for _, f := range hostFields {
			if n := i - len(f); n >= 0 && line[n:i] == f && (n == 0 || !isLetter(line[n-1])) {
				e := i
				for e < len(line) && line[e] != ' ' && line[e] != ',' && line[e] != ';' && line[e] != '"' && line[e] != '\t' {
					e++
				}
				out = append(out, [2]int{i, e})
				k = e
				break
			}
		}
	}
	if len(host) >= 3 {
		for k := 0; ; {
			i := strings.Index(line[k:], host)
			if i < 0 {
				break
			}
			i += k
			e := i + len(host)
			if (i == 0 || !nameByte(line[i-1])) && (e == len(line) || !nameByte(line[e])) {
				out = append(out, [2]int{i, e})
			}
			k = e
		}
	}
	return out
}

// nameByte reports a byte that continues a host name (a whole name is
// masked, not "gpu1" inside "gpu12").
func nameByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '-' || c == '.' || c == '_' }

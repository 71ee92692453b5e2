package xid

import (
	"strings"
	"time"
)

const (
	// dmesgLayout is `dmesg -T`'s stamp inside the brackets.
	dmesgLayout = "Mon Jan _2 15:04:05 2006"
	// syslogLayout is the BSD syslog (RFC 3164) stamp: no year, no zone.
	syslogLayout = "Jan _2 15:04:05"
	// futureSlack is how far past now a year-less stamp may lie before it is
	// taken to belong to the previous year (a December line read in January).
	futureSlack = 7 * 24 * time.Hour
)

// isoLayouts are RFC 3339 (rsyslog's high-precision format) and ISO 8601
// with a colon-less offset (journalctl -o short-iso). Go accepts fractional
// seconds after either '.' or ',' (dmesg --time-format iso) without them
// being in the layout.
var isoLayouts = [...]string{time.RFC3339, "2006-01-02T15:04:05Z0700"}

// parsePrefix fills ev.Timestamp and ev.Monotonic from the text before
// "NVRM: ". A prefix it does not recognise leaves both zero: the Xid itself
// is still reported.
func parsePrefix(p string, now time.Time, ev *Event) {
	p = strings.TrimLeft(p, " ")
	p = trimPriority(p)
	switch {
	case p == "":
	case p[0] == '[':
		// Raw dmesg "[ 1234.567890] " or dmesg -T "[Sun Nov 29 23:09:35 2026] ".
		end := strings.IndexByte(p, ']')
		if end < 0 {
			return
		}
		inner := p[1:end]
		if d, ok := parseUptime(inner); ok {
			ev.Monotonic = d
		} else if t, err := time.ParseInLocation(dmesgLayout, inner, now.Location()); err == nil {
			ev.Timestamp = t
		}
	case isDigit(p[0]):
		// "2026-11-29T23:09:35.123456+00:00 host kernel: …"
		stamp, rest, _ := strings.Cut(p, " ")
		for _, layout := range isoLayouts {
			if t, err := time.Parse(layout, stamp); err == nil {
				ev.Timestamp = t
				break
			}
		}
		ev.Monotonic = kernelUptime(rest)
	case len(p) >= len(syslogLayout) && p[3] == ' ':
		// "Nov 29 23:09:35 host kernel: [ 1234.5678] " or journalctl -k's
		// "Nov 29 23:09:35 host kernel: ".
		if t, err := time.ParseInLocation(syslogLayout, p[:len(syslogLayout)], now.Location()); err == nil {
			ev.Timestamp = withYear(t, now)
		}
		ev.Monotonic = kernelUptime(p[len(syslogLayout):])
	}
}

// trimPriority drops a leading "<4>" syslog priority (dmesg -r, consoles).
func trimPriority(p string) string {
	if len(p) < 3 || p[0] != '<' {
		return p
	}
	end := strings.IndexByte(p, '>')
	if end < 2 || end > 4 {
		return p
	}
	if _, n := leadingInt(p[1:end], 3); n != end-1 {
		return p
	}
	return p[end+1:]
}

// withYear puts a year-less stamp in now's year, or the year before when
// that would place it more than futureSlack after now.
func withYear(t, now time.Time) time.Time {
	y := now.Year()
	c := time.Date(y, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), now.Location())
	if c.After(now.Add(futureSlack)) {
		c = time.Date(y-1, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), now.Location())
	}
	return c
}

// kernelUptime finds the "[ 1234.567890]" that a syslog daemon keeps after
// "kernel: " when the kernel prints its own stamps.
func kernelUptime(s string) time.Duration {
	i := strings.Index(s, "kernel: [")
	if i < 0 {
		return 0
	}
	s = s[i+len("kernel: ["):]
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0
	}
	d, _ := parseUptime(s[:end])
	return d
}

// parseUptime parses "   1234.567890" (seconds since boot, padded).
func parseUptime(s string) (time.Duration, bool) {
	s = strings.TrimLeft(s, " ")
	secText, fracText, found := strings.Cut(s, ".")
	if !found || fracText == "" || len(fracText) > 9 {
		return 0, false
	}
	sec, n := leadingInt(secText, 10)
	if n == 0 || n != len(secText) {
		return 0, false
	}
	frac, n := leadingInt(fracText, 9)
	if n != len(fracText) {
		return 0, false
	}
	for i := len(fracText); i < 9; i++ {
		frac *= 10
	}
	return time.Duration(sec)*time.Second + time.Duration(frac), true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

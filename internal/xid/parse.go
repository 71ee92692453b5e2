package xid

import (
	"strings"
	"time"
)

// nvrmTag starts every message of NVIDIA's resource manager. Searching for it
// first is the cheap prefilter that rejects almost every log line.
const nvrmTag = "NVRM: "

// maxCodeDigits bounds the Xid number; real codes have at most 3 digits.
const maxCodeDigits = 5

// Event is one Xid reported by a kernel log line.
type Event struct {
	// Code is the Xid number.
	Code int
	// CodeInferred is true when the line carried no Xid number and Code was
	// inferred from the text: "NVRM: GPU 0000:3b:00.0: GPU has fallen off the
	// bus." is reported as Xid 79. The driver usually prints a numbered Xid 79
	// line as well, so callers that count Xids should prefer that one.
	CodeInferred bool
	// BusID is the GPU's PCI address in NVML's form, "00000000:3B:00.0".
	BusID string
	// GPUInstanceID and ComputeInstanceID are the MIG instance the driver
	// attributed the Xid to ("GPU-I:02 GPU-CI:01"), or -1 when not given.
	GPUInstanceID     int
	ComputeInstanceID int
	// PID is the process the driver names; valid only when HasPID. The driver
	// prints pid='<unknown>' when no channel owner is known.
	PID    int
	HasPID bool
	// ProcessName is the driver's name for the process; "" when absent or
	// "<unknown>".
	ProcessName string
	// Message is the driver's text after the code and the pid/name fields,
	// trailing white space removed.
	Message string
	// Timestamp is the wall-clock time from the line's prefix (dmesg -T,
	// syslog, RFC 3339); zero when the prefix carries none.
	Timestamp time.Time
	// Monotonic is the time since boot from a "[ 1234.567890]" prefix; zero
	// when the prefix carries none.
	Monotonic time.Duration
}

// ParseLine reports the Xid in one kernel log line. It returns false, after a
// single substring search, for lines without "NVRM: ", and for NVRM lines
// that report no Xid (including the "GPU at PCI:…: GPU-<uuid>" line, see
// ParseUUIDLine).
//
// Wall-clock stamps without a zone are read in the local time zone, and
// syslog stamps without a year get the year that puts them closest before
// now; use ParseLineAt to fix both.
//
// Each line is parsed alone. Some Xids are followed by further NVRM lines
// (Xid 119's GSP RPC history, for example); those are not Xid lines and are
// rejected, so Message holds the first line's text only. A single record
// whose text itself contains newlines keeps them in Message.
func ParseLine(line string) (Event, bool) {
	if !MayBeLine(line) {
		return Event{}, false
	}
	return ParseLineAt(line, time.Time{})
}

// MayBeLine is ParseLine's first test, for callers that scan many lines: false means the
// line is certainly no Xid line, without building an Event.
func MayBeLine(line string) bool { return strings.Contains(line, nvrmTag) }

// ParseLineAt is ParseLine with a reference time: now's location applies to
// stamps without a zone, and now's year (or the one before, for a stamp more
// than a week after now) to syslog stamps without a year. A zero now means
// time.Now().
func ParseLineAt(line string, now time.Time) (Event, bool) {
	for off := 0; ; {
		i := strings.Index(line[off:], nvrmTag)
		if i < 0 {
			return Event{}, false
		}
		start := off + i
		if ev, ok := parseBody(line[start+len(nvrmTag):]); ok {
			if start > 0 {
				if now.IsZero() {
					now = time.Now()
				}
				parsePrefix(line[:start], now, &ev)
			}
			return ev, true
		}
		off = start + len(nvrmTag)
	}
}

// ParseUUIDLine reads the line the driver prints once per GPU before its
// first Xid, "NVRM: GPU at PCI:0000:3b:00: GPU-5ebe…", which ties the kernel's
// bus id to the GPU's UUID even when NVML can no longer see the GPU.
func ParseUUIDLine(line string) (busID, uuid string, ok bool) {
	const tag = nvrmTag + "GPU at "
	i := strings.Index(line, tag)
	if i < 0 {
		return "", "", false
	}
	s := line[i+len(tag):]
	sep := strings.Index(s, ": ")
	if sep < 0 {
		return "", "", false
	}
	busID = NormalizeBusID(s[:sep])
	uuid = s[sep+2:]
	if end := strings.IndexAny(uuid, " \t\r\n"); end >= 0 {
		uuid = uuid[:end]
	}
	if busID == "" || !strings.HasPrefix(uuid, "GPU-") || len(uuid) == len("GPU-") {
		return "", "", false
	}
	return busID, uuid, true
}

// parseBody parses the text after "NVRM: ".
func parseBody(s string) (Event, bool) {
	switch {
	case strings.HasPrefix(s, "Xid "):
		return parseXid(s[len("Xid "):])
	case strings.HasPrefix(s, "GPU "):
		return parseFallenOff(s[len("GPU "):])
	}
	return Event{}, false
}

// parseXid parses "(PCI:0000:3b:00[ GPU-I:02[ GPU-CI:01]]): 31, pid=…, name=…, text"
// and its older forms: no "PCI:", no pid/name, pid without name.
func parseXid(s string) (Event, bool) {
	if !strings.HasPrefix(s, "(") {
		return Event{}, false
	}
	end := strings.IndexByte(s, ')')
	if end < 0 {
		return Event{}, false
	}
	ev := Event{GPUInstanceID: -1, ComputeInstanceID: -1}
	if !parseLocation(s[1:end], &ev) {
		return Event{}, false
	}
	rest, ok := strings.CutPrefix(s[end+1:], ": ")
	if !ok {
		return Event{}, false
	}
	code, n := leadingInt(rest, maxCodeDigits)
	if n == 0 || code == 0 {
		return Event{}, false
	}
	ev.Code = code
	rest = rest[n:]
	switch {
	case rest == "":
	case rest[0] == ',':
		rest = strings.TrimLeft(rest[1:], " ")
	case isSpace(rest[0]):
		rest = strings.TrimLeft(rest, " \t\r\n")
	default:
		return Event{}, false // "31x": not a code
	}
	rest = parseProcess(rest, &ev)
	ev.Message = strings.TrimRight(rest, " \t\r\n")
	return ev, true
}

// parseLocation parses the parenthesis: a bus id, then optional MIG fields.
func parseLocation(s string, ev *Event) bool {
	bus, extra, _ := strings.Cut(s, " ")
	ev.BusID = NormalizeBusID(bus)
	if ev.BusID == "" {
		return false
	}
	for extra != "" {
		var field string
		field, extra, _ = strings.Cut(extra, " ")
		if v, ok := strings.CutPrefix(field, "GPU-I:"); ok {
			if id, n := leadingInt(v, 5); n == len(v) && n > 0 {
				ev.GPUInstanceID = id
			}
		} else if v, ok := strings.CutPrefix(field, "GPU-CI:"); ok {
			if id, n := leadingInt(v, 5); n == len(v) && n > 0 {
				ev.ComputeInstanceID = id
			}
		}
	}
	return true
}

// parseProcess consumes the optional "pid=…, " and "name=…, " fields and
// returns the remaining message text.
//
// The driver prints the name unquoted, and it may contain spaces
// ("name=python train.py"), so the rule is: the name runs up to the first
// ", " after "name=". A name that itself contains ", " is cut there and the
// remainder becomes part of Message; the driver gives no way to tell the two
// apart.
func parseProcess(s string, ev *Event) string {
	if v, ok := strings.CutPrefix(s, "pid="); ok {
		var pid string
		pid, s = splitField(v)
		pid = strings.Trim(pid, "'\"")
		if id, n := leadingInt(pid, 10); n > 0 && n == len(pid) {
			ev.PID, ev.HasPID = id, true
		}
	}
	if v, ok := strings.CutPrefix(s, "name="); ok {
		var name string
		name, s = splitField(v)
		if name != "<unknown>" && name != "'<unknown>'" {
			ev.ProcessName = name
		}
	}
	return s
}

// splitField splits at the first ", ": the field, and the text after it.
func splitField(s string) (field, rest string) {
	if i := strings.Index(s, ", "); i >= 0 {
		return s[:i], s[i+2:]
	}
	return strings.TrimRight(s, " \t\r\n,"), ""
}

// parseFallenOff parses "0000:3b:00.0: GPU has fallen off the bus." (also
// "at PCI:0000:3b:00: …"), the driver's un-numbered report of an Xid 79.
func parseFallenOff(s string) (Event, bool) {
	s = strings.TrimPrefix(s, "at ")
	sep := strings.Index(s, ": ")
	if sep < 0 {
		return Event{}, false
	}
	msg := s[sep+2:]
	if !strings.Contains(msg, "fallen off the bus") {
		return Event{}, false
	}
	bus := NormalizeBusID(s[:sep])
	if bus == "" {
		return Event{}, false
	}
	return Event{
		Code:              79,
		CodeInferred:      true,
		BusID:             bus,
		GPUInstanceID:     -1,
		ComputeInstanceID: -1,
		Message:           strings.TrimRight(msg, " \t\r\n"),
	}, true
}

// leadingInt parses up to maxDigits leading decimal digits; n is how many
// bytes it used (0: none). It never allocates, unlike strconv on failure.
func leadingInt(s string, maxDigits int) (v, n int) {
	for n < len(s) && n < maxDigits && '0' <= s[n] && s[n] <= '9' {
		v = v*10 + int(s[n]-'0')
		n++
	}
	if n < len(s) && n == maxDigits && '0' <= s[n] && s[n] <= '9' {
		return 0, 0 // longer than allowed: not a number we accept
	}
	return v, n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

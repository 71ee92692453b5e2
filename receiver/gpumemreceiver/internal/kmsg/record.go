package kmsg

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrMalformed is wrapped by every ParseRecord error.
var ErrMalformed = errors.New("malformed kmsg record")

// Record is one kernel log record.
type Record struct {
	// Level is the syslog level, 0 (emergency) to 7 (debug): prio's low 3 bits.
	Level int
	// Facility is the syslog facility: prio without its level bits. The
	// kernel's own messages have facility 0.
	Facility int
	// Seq is the record's sequence number; a gap means records were lost.
	Seq uint64
	// Monotonic is the kernel's timestamp: time since boot.
	Monotonic time.Duration
	// Flags is the flags field: "-" normally, "c" or "+" for continuation
	// fragments on older kernels.
	Flags string
	// Text is the message with the kernel's \xNN escapes decoded.
	Text string
	// Dict holds the dictionary lines (SUBSYSTEM=pci, DEVICE=+pci:…), decoded;
	// nil when the record has none.
	Dict map[string]string
}

// Time converts Monotonic to wall-clock time given the boot time.
func (r Record) Time(boot time.Time) time.Time { return boot.Add(r.Monotonic) }

// maxUsec keeps Monotonic within time.Duration.
const maxUsec = math.MaxInt64 / int64(time.Microsecond)

// ParseRecord decodes one record: a header and text line, then optional
// dictionary lines that start with a space. A trailing newline is optional.
// Fields after the fourth header field (the "caller=" of newer kernels) are
// ignored.
func ParseRecord(b []byte) (Record, error) {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	semi := bytes.IndexByte(b, ';')
	if semi < 0 {
		return Record{}, fmt.Errorf("%w: no ';' after the header", ErrMalformed)
	}
	header, body := b[:semi], b[semi+1:]

	var fields [4][]byte
	for i := range fields {
		if i < 3 {
			comma := bytes.IndexByte(header, ',')
			if comma < 0 {
				return Record{}, fmt.Errorf("%w: header has %d fields, want at least 4", ErrMalformed, i+1)
			}
			fields[i], header = header[:comma], header[comma+1:]
			continue
		}
		fields[i], _, _ = bytes.Cut(header, []byte{','})
	}
	prio, ok := parseUint(fields[0])
	if !ok || prio > math.MaxInt32 {
		return Record{}, fmt.Errorf("%w: priority %q", ErrMalformed, fields[0])
	}
	seq, ok := parseUint(fields[1])
	if !ok {
		return Record{}, fmt.Errorf("%w: sequence %q", ErrMalformed, fields[1])
	}
	usec, ok := parseUint(fields[2])
	if !ok || usec > uint64(maxUsec) {
		return Record{}, fmt.Errorf("%w: timestamp %q", ErrMalformed, fields[2])
	}
	rec := Record{
		Level:     int(prio & 7),
		Facility:  int(prio >> 3),
		Seq:       seq,
		Monotonic: time.Duration(usec) * time.Microsecond,
		Flags:     internFlags(fields[3]),
	}

	text, dict, hasDict := bytes.Cut(body, []byte{'\n'})
	rec.Text = unescape(text)
	if hasDict {
		d, err := parseDict(dict)
		if err != nil {
			return Record{}, err
		}
		rec.Dict = d
	}
	return rec, nil
}

// parseDict decodes " KEY=value" lines.
func parseDict(b []byte) (map[string]string, error) {
	d := make(map[string]string, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if len(line) == 0 || line[0] != ' ' {
			return nil, fmt.Errorf("%w: dictionary line %q does not start with a space", ErrMalformed, line)
		}
		key, value, ok := bytes.Cut(line[1:], []byte{'='})
		if !ok || len(key) == 0 {
			return nil, fmt.Errorf("%w: dictionary line %q is not KEY=value", ErrMalformed, line)
		}
		d[unescape(key)] = unescape(value)
	}
	return d, nil
}

// internFlags avoids an allocation for the flags the kernel actually uses.
func internFlags(b []byte) string {
	switch string(b) {
	case "-":
		return "-"
	case "c":
		return "c"
	case "+":
		return "+"
	}
	return string(b)
}

// parseUint parses a non-empty decimal without allocating.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// unescape decodes the kernel's \xNN escapes (it escapes control bytes,
// bytes >= 0x7f and the backslash itself). A malformed escape stays as is.
func unescape(b []byte) string {
	i := bytes.Index(b, []byte(`\x`))
	if i < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i >= 0 {
		out = append(out, b[:i]...)
		if i+3 < len(b) && hexDigit(b[i+2]) < 16 && hexDigit(b[i+3]) < 16 {
			out = append(out, hexDigit(b[i+2])<<4|hexDigit(b[i+3]))
			b = b[i+4:]
		} else {
			out = append(out, b[i:i+2]...)
			b = b[i+2:]
		}
		i = bytes.Index(b, []byte(`\x`))
	}
	return string(append(out, b...))
}

// hexDigit returns a hex digit's value, or 16 for anything else.
func hexDigit(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 16
}

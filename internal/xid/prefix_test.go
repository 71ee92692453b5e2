package xid

import (
	"testing"
	"time"
)

// TestParsePrefixBoundaries pins what each prefix form yields at the edges
// of what it accepts. A prefix that is not recognised gives no time, and
// the Xid after it is still reported.
func TestParsePrefixBoundaries(t *testing.T) {
	const body = "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=a, b"
	utc := func(s string) time.Time {
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	tests := []struct {
		note, prefix string
		ts           time.Time
		mono         time.Duration
	}{
		// Raw dmesg uptime: up to 9 fraction digits (nanoseconds), one or more.
		{"nanosecond fraction", "[    1.123456789] ", time.Time{}, time.Second + 123456789},
		{"one fraction digit", "[1.5] ", time.Time{}, 1500 * time.Millisecond},
		{"ten fraction digits", "[    1.1234567891] ", time.Time{}, 0},
		{"no fraction", "[    1.] ", time.Time{}, 0},
		{"no dot", "[ 1234] ", time.Time{}, 0},
		{"no seconds", "[ .5] ", time.Time{}, 0},
		{"letter in seconds", "[ 12a.5] ", time.Time{}, 0},
		{"letter in fraction", "[ 1.5a] ", time.Time{}, 0},
		{"ten-digit seconds", "[1234567890.000001] ", time.Time{}, 1234567890*time.Second + time.Microsecond},
		{"eleven-digit seconds", "[12345678901.000001] ", time.Time{}, 0},
		{"unclosed bracket", "[ 1234.5678 ", time.Time{}, 0},
		{"leading spaces before the bracket", "   [ 2.000001] ", time.Time{}, 2*time.Second + time.Microsecond},

		// Console priority: "<0>" to "<191>", digits only.
		{"priority 191", "<191>[ 2.5] ", time.Time{}, 2500 * time.Millisecond},
		{"priority 0", "<0>[ 2.5] ", time.Time{}, 2500 * time.Millisecond},
		{"four-digit priority", "<1234>[ 2.5] ", time.Time{}, 0},
		{"empty priority", "<>[ 2.5] ", time.Time{}, 0},
		{"letter in priority", "<4a>[ 2.5] ", time.Time{}, 0},
		{"unclosed priority", "<4[ 2.5] ", time.Time{}, 0},

		// syslog: the kernel's uptime after "kernel: ", if any.
		{"syslog unclosed kernel stamp", "Nov 29 23:09:35 h kernel: [ 1234.5 ", utc("2026-11-29T23:09:35Z"), 0},
		{"syslog stamp right before NVRM", "Nov 29 23:09:35", utc("2026-11-29T23:09:35Z"), 0},
		{"syslog stamp cut short", "Nov 29 23:09:3", time.Time{}, 0},
		{"seven days after now is this year", "Dec  8 00:00:00 h kernel: ", utc("2026-12-08T00:00:00Z"), 0},
		{"past seven days after now is last year", "Dec  8 00:00:01 h kernel: ", utc("2025-12-08T00:00:01Z"), 0},

		// RFC 3339 and ISO 8601 stamps.
		{"RFC 3339 UTC", "2026-11-29T23:09:35Z h kernel: [ 7.000001] ", utc("2026-11-29T23:09:35Z"), 7*time.Second + time.Microsecond},
		{"ISO colon-less offset", "2026-11-29T23:09:35.5-0130 h kernel: ", utc("2026-11-30T00:39:35.5Z"), 0},
		{"digits that are no stamp", "12345 h kernel: [ 7.5] ", time.Time{}, 7500 * time.Millisecond},
		{"no stamp, leading 0", "0123 h kernel: [ 7.5] ", time.Time{}, 7500 * time.Millisecond},
		{"no stamp, leading 9", "9876 h kernel: [ 7.5] ", time.Time{}, 7500 * time.Millisecond},
		{"stamp then kernel: without a host", "2026-11-29T23:09:35Z kernel: [ 7.5] ", utc("2026-11-29T23:09:35Z"), 7500 * time.Millisecond},

		// dmesg -T.
		{"dmesg -T", "[Tue Dec  1 00:00:00 2026] ", utc("2026-12-01T00:00:00Z"), 0},
		{"dmesg -T malformed", "[Tue Dec 1st 2026] ", time.Time{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			ev, ok := ParseLineAt(tt.prefix+body, refNow)
			if !ok {
				t.Fatalf("ParseLineAt(%q) = not ok", tt.prefix+body)
			}
			if !ev.Timestamp.Equal(tt.ts) || ev.Monotonic != tt.mono {
				t.Errorf("prefix %q: Timestamp %v, Monotonic %v; want %v, %v", tt.prefix, ev.Timestamp, ev.Monotonic, tt.ts, tt.mono)
			}
			if ev.Code != 13 || ev.Message != "b" {
				t.Errorf("prefix %q changed the Xid: %+v", tt.prefix, ev)
			}
		})
	}
}

// ParseLine without a reference time uses the current one: a year-less
// syslog stamp lands in this year or, if that would put it more than a
// week ahead, the last.
func TestParseLineYearFromNow(t *testing.T) {
	ev, ok := ParseLine("Jan  1 00:00:00 h kernel: NVRM: Xid (PCI:0000:3b:00): 13, x")
	if !ok {
		t.Fatal("not ok")
	}
	now := time.Now()
	want := time.Date(now.Year(), time.January, 1, 0, 0, 0, 0, time.Local)
	if want.After(now.Add(futureSlack)) {
		want = want.AddDate(-1, 0, 0)
	}
	if !ev.Timestamp.Equal(want) {
		t.Errorf("Timestamp = %v, want %v", ev.Timestamp, want)
	}
}

package kmsg

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

func TestParseRecord(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Record
	}{
		{
			name: "kernel warning",
			in:   "4,815,1234568000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=<unknown>, name=<unknown>, GPU has fallen off the bus.\n",
			want: Record{Level: 4, Seq: 815, Monotonic: 1234568 * time.Millisecond, Flags: "-",
				Text: "NVRM: Xid (PCI:0000:3b:00): 79, pid=<unknown>, name=<unknown>, GPU has fallen off the bus."},
		},
		{
			name: "dictionary",
			in:   "3,813,1234567890,-;pcieport 0000:00:03.1: AER: error received\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:03.1\n",
			want: Record{Level: 3, Seq: 813, Monotonic: 1234567890 * time.Microsecond, Flags: "-",
				Text: "pcieport 0000:00:03.1: AER: error received",
				Dict: map[string]string{"SUBSYSTEM": "pci", "DEVICE": "+pci:0000:00:03.1"}},
		},
		{
			name: "caller field and no trailing newline",
			in:   "4,5,6,-,caller=T123;hello",
			want: Record{Level: 4, Seq: 5, Monotonic: 6 * time.Microsecond, Flags: "-", Text: "hello"},
		},
		{
			name: "user facility",
			in:   "14,1,0,c;from user space\n",
			want: Record{Level: 6, Facility: 1, Seq: 1, Flags: "c", Text: "from user space"},
		},
		{
			name: "escapes",
			in:   `6,1,1,+;a\x0ab\x5cx\x4 \xZZ\x` + "\n",
			want: Record{Level: 6, Seq: 1, Monotonic: time.Microsecond, Flags: "+", Text: "a\nb\\x" + `\x4 \xZZ\x`},
		},
		{
			name: "escaped dictionary value",
			in:   "6,1,1,-;t\n K=a\\x3db\n",
			want: Record{Level: 6, Seq: 1, Monotonic: time.Microsecond, Flags: "-", Text: "t", Dict: map[string]string{"K": "a=b"}},
		},
		{
			name: "empty text",
			in:   "0,18446744073709551615,0,-;\n",
			want: Record{Seq: 18446744073709551615, Flags: "-"},
		},
		{
			name: "semicolon in text",
			in:   "6,1,1,-;a;b\n",
			want: Record{Level: 6, Seq: 1, Monotonic: time.Microsecond, Flags: "-", Text: "a;b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRecord([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseRecord(%q): %v", tt.in, err)
			}
			if !equalRecord(got, tt.want) {
				t.Errorf("ParseRecord(%q)\n got  %+v\n want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseRecordMalformed(t *testing.T) {
	for _, in := range malformedRecords {
		if rec, err := ParseRecord([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseRecord(%q) = %+v, %v; want ErrMalformed", in, rec, err)
		}
	}
}

// malformedRecords also seed the fuzz test.
var malformedRecords = []string{
	"",
	"\n",
	"no header at all",
	"6,1,2;three header fields",
	"6;one field",
	"x,1,2,-;bad priority",
	"6,-1,2,-;negative sequence",
	"6,1,,-;empty timestamp",
	"6,1,99999999999999999999,-;timestamp overflows uint64",
	"6,1,9223372036854776,-;timestamp overflows Duration",
	"6,18446744073709551616,2,-;sequence overflows uint64",
	"2147483648,1,2,-;priority too large",
	"6,1,2,-;t\nNOT_SPACE=1",
	"6,1,2,-;t\n =value without key",
	"6,1,2,-;t\n no equals sign",
	"6,1,2,-;t\n\n K=v",
}

func TestRecordTime(t *testing.T) {
	boot := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	r := Record{Monotonic: 90 * time.Second}
	if got := r.Time(boot); !got.Equal(boot.Add(90 * time.Second)) {
		t.Errorf("Time = %v", got)
	}
}

func equalRecord(a, b Record) bool {
	return a.Level == b.Level && a.Facility == b.Facility && a.Seq == b.Seq &&
		a.Monotonic == b.Monotonic && a.Flags == b.Flags && a.Text == b.Text &&
		maps.Equal(a.Dict, b.Dict) && (a.Dict == nil) == (b.Dict == nil)
}

// The largest values each header field takes: a priority that fits an
// int32 and a timestamp that fits a time.Duration.
func TestParseRecordLimits(t *testing.T) {
	rec, err := ParseRecord([]byte("2147483647,1,9223372036854775,-;limits\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Record{Level: 7, Facility: 1<<28 - 1, Seq: 1, Monotonic: 9223372036854775 * time.Microsecond, Flags: "-", Text: "limits"}
	if !equalRecord(rec, want) {
		t.Errorf("ParseRecord = %+v, want %+v", rec, want)
	}
}

// Errors say which part of the record is wrong.
func TestParseRecordErrorNamesThePart(t *testing.T) {
	tests := []struct{ in, want string }{
		{"6,1,2,- no semicolon", "no ';'"},
		{";text", "header has 1 fields"},
		{"6;one field", "header has 1 fields"},
		{"6,1;two fields", "header has 2 fields"},
		{"6,1,2;three fields", "header has 3 fields"},
		{",1,2,-;empty priority", `priority ""`},
		{"6,,2,-;empty sequence", `sequence ""`},
		{"6,1,,-;empty timestamp", `timestamp ""`},
		{"6,1,9223372036854776,-;past Duration", `timestamp "9223372036854776"`},
		{"6,1,2,-;t\nK=v", "does not start with a space"},
		{"6,1,2,-;t\n K", "is not KEY=value"},
	}
	for _, tt := range tests {
		_, err := ParseRecord([]byte(tt.in))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseRecord(%q) = %v, want ErrMalformed saying %q", tt.in, err, tt.want)
		}
	}
}

// Flags other than the three the kernel prints are kept verbatim.
func TestParseRecordOtherFlags(t *testing.T) {
	for _, flags := range []string{"-", "c", "+", "", "x"} {
		rec, err := ParseRecord([]byte("6,1,1," + flags + ";t"))
		if err != nil || rec.Flags != flags {
			t.Errorf("flags %q: got %q, %v", flags, rec.Flags, err)
		}
	}
}

// The kernel writes \xNN in lower case; upper case decodes too, and only
// hex digits make an escape.
func TestUnescapeHexDigits(t *testing.T) {
	tests := []struct{ in, want string }{
		{`\x30\x39\x61\x66\x41\x46`, "09afAF"},
		{`\x5C\x5c`, `\\`},
		{`\x4a\x4A\x4f\x4F`, "JJOO"},
		// One byte beyond each digit range: '/', ':', '@', 'G', '`', 'g'.
		{`\x/0\x:0\x@0\xG0\x` + "`0" + `\xg0`, `\x/0\x:0\x@0\xG0\x` + "`0" + `\xg0`},
		{`\x0/\x0:\x0@\x0G\x0` + "`" + `\x0g`, `\x0/\x0:\x0@\x0G\x0` + "`" + `\x0g`},
		{`end\x4`, `end\x4`},
		{`\x41`, "A"},
	}
	for _, tt := range tests {
		if got := unescape([]byte(tt.in)); got != tt.want {
			t.Errorf("unescape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

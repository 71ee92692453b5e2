package kmsg

import (
	"errors"
	"maps"
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

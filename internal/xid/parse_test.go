package xid

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// refNow is the reference time for the corpus: UTC, so zone-less stamps are
// read as UTC, and late in 2026, so "Dec 31" resolves to 2025.
var refNow = time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC)

// corpusCase is one line of testdata/xid_lines.jsonl.
type corpusCase struct {
	Note     string `json:"note"`
	Line     string `json:"line"`
	Code     int    `json:"code"`
	Inferred bool   `json:"inferred"`
	Bus      string `json:"bus"`
	GI       *int   `json:"gi"`
	CI       *int   `json:"ci"`
	PID      *int   `json:"pid"`
	Name     string `json:"name"`
	Message  string `json:"message"`
	Time     string `json:"time"`
	Mono     string `json:"mono"`
}

func loadXidCases(t testing.TB) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "xid_lines.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpusCase
	for i, raw := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c corpusCase
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatalf("xid_lines.jsonl line %d: %v", i+1, err)
		}
		cases = append(cases, c)
	}
	return cases
}

func loadNonXidLines(t testing.TB) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "non_xid_lines.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func (c corpusCase) want(t *testing.T) Event {
	t.Helper()
	want := Event{
		Code: c.Code, CodeInferred: c.Inferred, BusID: c.Bus,
		GPUInstanceID: -1, ComputeInstanceID: -1,
		ProcessName: c.Name, Message: c.Message,
	}
	if c.GI != nil {
		want.GPUInstanceID = *c.GI
	}
	if c.CI != nil {
		want.ComputeInstanceID = *c.CI
	}
	if c.PID != nil {
		want.PID, want.HasPID = *c.PID, true
	}
	if c.Time != "" {
		ts, err := time.Parse(time.RFC3339Nano, c.Time)
		if err != nil {
			t.Fatal(err)
		}
		want.Timestamp = ts
	}
	if c.Mono != "" {
		d, err := time.ParseDuration(c.Mono)
		if err != nil {
			t.Fatal(err)
		}
		want.Monotonic = d
	}
	return want
}

func TestParseLineCorpus(t *testing.T) {
	for _, c := range loadXidCases(t) {
		t.Run(c.Note, func(t *testing.T) {
			got, ok := ParseLineAt(c.Line, refNow)
			if !ok {
				t.Fatalf("ParseLineAt(%q) = not ok", c.Line)
			}
			want := c.want(t)
			if !got.Timestamp.Equal(want.Timestamp) {
				t.Errorf("Timestamp = %v, want %v", got.Timestamp, want.Timestamp)
			}
			got.Timestamp, want.Timestamp = time.Time{}, time.Time{}
			if got != want {
				t.Errorf("ParseLineAt(%q)\n got  %+v\n want %+v", c.Line, got, want)
			}
		})
	}
}

func TestParseLineRejects(t *testing.T) {
	for _, line := range loadNonXidLines(t) {
		if ev, ok := ParseLine(line); ok {
			t.Errorf("ParseLine(%q) = %+v, want not ok", line, ev)
		}
	}
}

func TestParseLineLocalTimeByDefault(t *testing.T) {
	ev, ok := ParseLine("[Sun Nov 29 23:09:35 2026] NVRM: Xid (PCI:0000:3b:00): 13, x")
	if !ok {
		t.Fatal("not ok")
	}
	want := time.Date(2026, time.November, 29, 23, 9, 35, 0, time.Local)
	if !ev.Timestamp.Equal(want) {
		t.Errorf("Timestamp = %v, want %v", ev.Timestamp, want)
	}
}

func TestParseLineAtZone(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	ev, ok := ParseLineAt("Nov 29 23:09:35 h kernel: NVRM: Xid (PCI:0000:3b:00): 13, x", refNow.In(berlin))
	if !ok {
		t.Fatal("not ok")
	}
	want := time.Date(2026, time.November, 29, 22, 9, 35, 0, time.UTC)
	if !ev.Timestamp.Equal(want) {
		t.Errorf("Timestamp = %v, want %v", ev.Timestamp, want)
	}
}

func TestParseUUIDLine(t *testing.T) {
	tests := []struct {
		line, bus, uuid string
		ok              bool
	}{
		{"[    5.123456] NVRM: GPU at PCI:0000:3b:00: GPU-5ebe2f23-1c7e-9b2a-3b3e-0f3c5a1d9e77", "00000000:3B:00.0", "GPU-5ebe2f23-1c7e-9b2a-3b3e-0f3c5a1d9e77", true},
		{"NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7\n", "00000000:03:00.0", "GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7", true},
		{"NVRM: GPU at PCI:0000:3b:00: GPU has fallen off the bus.", "", "", false},
		{"NVRM: GPU at PCI:0000:3b:00: GPU-", "", "", false},
		{"NVRM: GPU at PCI:zz:3b:00: GPU-1", "", "", false},
		{"NVRM: GPU Board Serial Number: 1654922001234", "", "", false},
		{"NVRM: GPU at PCI:0000:3b:00 no separator", "", "", false},
	}
	for _, tt := range tests {
		bus, uuid, ok := ParseUUIDLine(tt.line)
		if bus != tt.bus || uuid != tt.uuid || ok != tt.ok {
			t.Errorf("ParseUUIDLine(%q) = %q, %q, %v; want %q, %q, %v", tt.line, bus, uuid, ok, tt.bus, tt.uuid, tt.ok)
		}
	}
}

func TestParseLineNonXidDoesNotAllocate(t *testing.T) {
	line := "Nov 29 23:09:35 gpu-node-7 kernel: [ 1234.5678] nvme nvme0: I/O 123 QID 4 timeout, completion polled"
	if n := testing.AllocsPerRun(100, func() { ParseLine(line) }); n != 0 {
		t.Errorf("ParseLine on a non-Xid line allocates %v times", n)
	}
}

// TestParseXidFieldEdges pins the edges of the Xid line's fields: code
// length, what may follow the code, MIG fields, pid and name at the end of
// the line.
func TestParseXidFieldEdges(t *testing.T) {
	const pre = "NVRM: Xid (PCI:0000:3b:00"
	tests := []struct {
		note, line string
		want       Event // BusID is 00000000:3B:00.0 in all
	}{
		{"five-digit code", pre + "): 12345, x", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 12345, Message: "x"}},
		{"code then a space", pre + "): 43 Ch 00000010", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 43, Message: "Ch 00000010"}},
		{"code then a tab", pre + "): 43\tCh 00000010", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 43, Message: "Ch 00000010"}},
		{"code then a newline", pre + "): 43\n", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 43}},
		{"name at the end of the line", pre + "): 13, pid=7, name=python3", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, PID: 7, HasPID: true, ProcessName: "python3"}},
		{"pid at the end of the line", pre + "): 13, pid=7,", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, PID: 7, HasPID: true}},
		{"quoted pid", pre + "): 13, pid='7', name=a, b", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, PID: 7, HasPID: true, ProcessName: "a", Message: "b"}},
		{"quoted unknown name", pre + "): 13, pid=7, name='<unknown>', b", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, PID: 7, HasPID: true, Message: "b"}},
		{"ten-digit pid", pre + "): 13, pid=4194304000, name=a, b", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, PID: 4194304000, HasPID: true, ProcessName: "a", Message: "b"}},
		{"eleven-digit pid is no pid", pre + "): 13, pid=41943040000, name=a, b", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, ProcessName: "a", Message: "b"}},
		{"empty pid", pre + "): 13, pid=, name=a, b", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, ProcessName: "a", Message: "b"}},
		{"pid with a letter", pre + "): 13, pid=12ab, name=a, b", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 13, ProcessName: "a", Message: "b"}},
		{"empty MIG ids are ignored", pre + " GPU-I: GPU-CI:): 31, x", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 31, Message: "x"}},
		{"MIG ids with letters are ignored", pre + " GPU-I:2x GPU-CI:1y): 31, x", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 31, Message: "x"}},
		{"five-digit MIG ids", pre + " GPU-I:12345 GPU-CI:54321): 31, x", Event{Code: 31, GPUInstanceID: 12345, ComputeInstanceID: 54321, Message: "x"}},
		{"six-digit MIG ids are ignored", pre + " GPU-I:123456 GPU-CI:654321): 31, x", Event{GPUInstanceID: -1, ComputeInstanceID: -1, Code: 31, Message: "x"}},
		{"MIG id zero", pre + " GPU-I:0 GPU-CI:0): 31, x", Event{Code: 31, GPUInstanceID: 0, ComputeInstanceID: 0, Message: "x"}},
		{"unknown location field is ignored", pre + " foo GPU-CI:3): 31, x", Event{GPUInstanceID: -1, ComputeInstanceID: 3, Code: 31, Message: "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			want := tt.want
			want.BusID = "00000000:3B:00.0"
			got, ok := ParseLine(tt.line)
			if !ok || got != want {
				t.Errorf("ParseLine(%q)\n got  %+v, %v\n want %+v", tt.line, got, ok, want)
			}
		})
	}
}

// Lines close to an Xid line that are none.
func TestParseLineNearMisses(t *testing.T) {
	for _, line := range []string{
		"NVRM: Xid (PCI:0000:3b:00): 123456, six-digit code",
		"NVRM: Xid (PCI:0000:3b:00): 31:x",
		"NVRM: Xid (PCI:0000:3b:00):31, no space after the colon",
		"NVRM: Xid (): 31, no bus",
		"NVRM: GPU 0000:3b:00.0 GPU has fallen off the bus.",
		"NVRM: GPU zz:3b:00: GPU has fallen off the bus.",
		"NVRM: GPU 0000:3b:00.0: GPU is fine",
	} {
		if ev, ok := ParseLine(line); ok {
			t.Errorf("ParseLine(%q) = %+v, want not ok", line, ev)
		}
	}
}

// leadingInt reads at most maxDigits digits and refuses a longer number
// rather than reading part of it.
func TestLeadingInt(t *testing.T) {
	tests := []struct {
		s         string
		maxDigits int
		v, n      int
	}{
		{"12345", 5, 12345, 5},
		{"12345x", 5, 12345, 5},
		{"123450", 5, 0, 0},
		{"123459", 5, 0, 0},
		{"09", 2, 9, 2},
		{"0/", 2, 0, 1},
		{"9:", 2, 9, 1},
		{"x1", 5, 0, 0},
		{"", 5, 0, 0},
	}
	for _, tt := range tests {
		if v, n := leadingInt(tt.s, tt.maxDigits); v != tt.v || n != tt.n {
			t.Errorf("leadingInt(%q, %d) = %d, %d; want %d, %d", tt.s, tt.maxDigits, v, n, tt.v, tt.n)
		}
	}
}

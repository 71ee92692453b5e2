package xid

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseLine checks that ParseLine never panics and that what it accepts
// is well formed.
func FuzzParseLine(f *testing.F) {
	for _, c := range loadXidCases(f) {
		f.Add(c.Line)
	}
	for _, line := range loadNonXidLines(f) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ev, ok := ParseLineAt(line, refNow)
		if !ok {
			if ev != (Event{}) {
				t.Fatalf("not ok but non-zero event %+v", ev)
			}
			return
		}
		if !strings.Contains(line, nvrmTag) {
			t.Fatalf("accepted a line without %q", nvrmTag)
		}
		if ev.Code <= 0 {
			t.Fatalf("Code = %d", ev.Code)
		}
		if ev.BusID == "" || NormalizeBusID(ev.BusID) != ev.BusID {
			t.Fatalf("BusID %q not normalised", ev.BusID)
		}
		if ev.CodeInferred && ev.Code != 79 {
			t.Fatalf("inferred code %d", ev.Code)
		}
		if ev.HasPID && (ev.PID < 0 || !strings.Contains(line, "pid=")) || !ev.HasPID && ev.PID != 0 {
			t.Fatalf("PID %d HasPID %v", ev.PID, ev.HasPID)
		}
		if ev.GPUInstanceID < -1 || ev.ComputeInstanceID < -1 {
			t.Fatalf("MIG ids %d %d", ev.GPUInstanceID, ev.ComputeInstanceID)
		}
		if ev.Monotonic < 0 {
			t.Fatalf("Monotonic = %v", ev.Monotonic)
		}
		if !strings.Contains(line, ev.Message) || !strings.Contains(line, ev.ProcessName) {
			t.Fatalf("Message or ProcessName not taken from the line: %+v", ev)
		}
		if utf8.ValidString(line) && (!utf8.ValidString(ev.Message) || !utf8.ValidString(ev.ProcessName)) {
			t.Fatalf("split a valid line inside a rune: %+v", ev)
		}
	})
}

// FuzzNormalizeBusID checks that NormalizeBusID is idempotent and yields
// either "" or NVML's 16-character form.
func FuzzNormalizeBusID(f *testing.F) {
	for _, s := range []string{"PCI:0000:3b:00", "0000:3b:00.0", "00000000:3B:00.0", "3b:00.1", "03f8cfdd:00:00.0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeBusID(s)
		if got == "" {
			return
		}
		if !isCanonicalBusID(got) {
			t.Fatalf("NormalizeBusID(%q) = %q, not canonical", s, got)
		}
		if again := NormalizeBusID(got); again != got {
			t.Fatalf("not idempotent: %q -> %q", got, again)
		}
	})
}

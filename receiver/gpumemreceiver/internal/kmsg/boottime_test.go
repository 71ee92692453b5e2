package kmsg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestBootTimeFromUptime(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	got, err := bootTimeFromUptime(strings.NewReader("3600.50 7000.00\n"), now)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-3600*time.Second - 500*time.Millisecond); !got.Equal(want) {
		t.Errorf("boot = %v, want %v", got, want)
	}
	for _, bad := range []string{"", "abc 1", "-5 1", "NaN 1", "1e300 1"} {
		if _, err := bootTimeFromUptime(strings.NewReader(bad), now); err == nil {
			t.Errorf("uptime %q accepted", bad)
		}
	}
}

func TestBootTime(t *testing.T) {
	boot, err := BootTime()
	if err != nil {
		t.Skipf("no /proc/uptime: %v", err)
	}
	if !boot.Before(time.Now()) || time.Since(boot) > 10*365*24*time.Hour {
		t.Errorf("BootTime = %v", boot)
	}
	if _, err := BootTimeFrom(filepath.Join(t.TempDir(), "missing"), time.Now()); err == nil {
		t.Error("missing uptime file accepted")
	}
}

// BootTimeFrom reads the given file: the boot time is exact to 1/100 s.
func TestBootTimeFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "uptime")
	if err := os.WriteFile(path, []byte("86400.25 170000.00\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	got, err := BootTimeFrom(path, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(-86400*time.Second - 250*time.Millisecond); !got.Equal(want) {
		t.Errorf("BootTimeFrom = %v, want %v", got, want)
	}
}

// The boot time lies on the 1/100 s grid /proc/uptime has, so readings a
// few milliseconds apart give the same boot time and records converted with
// either get the same wall-clock time.
func TestBootTimeRoundsToUptimePrecision(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, ms := range []int{0, 1, 3, 4} {
		now := base.Add(time.Duration(ms) * time.Millisecond)
		got, err := bootTimeFromUptime(strings.NewReader("100.00 1.00\n"), now)
		if err != nil {
			t.Fatal(err)
		}
		if want := base.Add(-100 * time.Second); !got.Equal(want) {
			t.Errorf("now +%dms: boot = %v, want %v", ms, got, want)
		}
	}
}

// Uptime's bounds are inclusive: 0 (just booted) and the 292 years a
// time.Duration holds (a larger value used to overflow into a wrong boot
// time); the line may lack its newline.
func TestBootTimeUptimeBounds(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"0.00 0.00\n": now,
		"9223372036":  now.Add(-9223372036 * time.Second),
		"42.00":       now.Add(-42 * time.Second),
	} {
		got, err := bootTimeFromUptime(strings.NewReader(in), now)
		if err != nil || !got.Equal(want) {
			t.Errorf("uptime %q: boot = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-0.01 0", "9223372037 0", "1e10 0"} {
		if _, err := bootTimeFromUptime(strings.NewReader(bad), now); err == nil {
			t.Errorf("uptime %q accepted", bad)
		}
	}
	if _, err := bootTimeFromUptime(iotest.ErrReader(errors.New("disk gone")), now); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Errorf("read error = %v, want it reported", err)
	}
}

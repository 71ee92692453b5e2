package kmsg

import (
	"path/filepath"
	"strings"
	"testing"
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

package kmsg

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// BootTime returns the wall-clock time the system booted, from
// /proc/uptime: now minus the uptime, which is more precise (1/100 s) than
// /proc/stat's btime (whole seconds).
//
// Kernel timestamps do not advance while the system is suspended and uptime
// does, so after a suspend Record.Time runs early by the time spent
// suspended; the same holds for dmesg -T. GPU servers rarely suspend.
func BootTime() (time.Time, error) {
	return BootTimeFrom("/proc/uptime", time.Now())
}

// BootTimeFrom is BootTime with the uptime file (for example under a
// host /proc mounted elsewhere) and the current time given.
func BootTimeFrom(uptimePath string, now time.Time) (time.Time, error) {
	f, err := os.Open(uptimePath)
	if err != nil {
		return time.Time{}, fmt.Errorf("read boot time: %w", err)
	}
	defer f.Close()
	return bootTimeFromUptime(f, now)
}

// maxUptimeSecs is the longest uptime a time.Duration holds (292 years);
// a larger one would overflow the conversion below.
const maxUptimeSecs = float64(math.MaxInt64 / int64(time.Second))

// bootTimeFromUptime parses /proc/uptime's first field, "12345.67 …".
func bootTimeFromUptime(r io.Reader, now time.Time) (time.Time, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 256)).ReadString('\n')
	if err != nil && err != io.EOF {
		return time.Time{}, fmt.Errorf("read uptime: %w", err)
	}
	field, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	secs, err := strconv.ParseFloat(field, 64)
	if err != nil || !(secs >= 0 && secs <= maxUptimeSecs) { // also rejects NaN
		return time.Time{}, fmt.Errorf("parse uptime %q: not a number of seconds", field)
	}
	return now.Add(-time.Duration(secs * float64(time.Second))).Round(10 * time.Millisecond), nil
}

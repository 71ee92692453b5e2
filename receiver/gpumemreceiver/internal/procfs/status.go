package procfs

import (
	"strconv"
	"strings"
)

// parseNSpid returns the last pid on the "NSpid:" line of a
// /proc/<pid>/status file: the process's pid in the innermost pid namespace,
// the one its own logs print. It returns 0 when the line is missing (kernels
// before 4.1) or malformed.
func parseNSpid(status string) int {
	for len(status) > 0 {
		var line string
		line, status, _ = strings.Cut(status, "\n")
		rest, ok := strings.CutPrefix(line, "NSpid:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0
		}
		pid, err := strconv.Atoi(fields[len(fields)-1])
		if err != nil || pid <= 0 {
			return 0
		}
		return pid
	}
	return 0
}

package simnvml

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runtimeLines wraps an application's text as a container runtime writes it to the node's
// log file, one entry per line, stamped at: CRI's "<RFC 3339 nano> <stream> <P|F> <text>"
// (what the kubelet's /var/log/pods files hold) or Docker's json-file objects. Any other
// format leaves the text as it is, newline-terminated.
func runtimeLines(format string, at time.Time, text string) string {
	text = strings.TrimSuffix(text, "\n")
	if format != LogFormatCRI && format != LogFormatDocker {
		return text + "\n"
	}
	stamp := at.UTC().Format(time.RFC3339Nano)
	var b strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if format == LogFormatCRI {
			b.WriteString(stamp + " stderr F " + line + "\n")
			continue
		}
		entry, _ := json.Marshal(struct {
			Log    string `json:"log"`
			Stream string `json:"stream"`
			Time   string `json:"time"`
		}{line + "\n", "stderr", stamp})
		b.Write(entry)
		b.WriteByte('\n')
	}
	return b.String()
}

// layoutPodLogs makes the kubelet's log layout for pods under dir: a directory per pod
// container, and in dir's sibling "containers" the kubelet's link per container with an id,
// named <pod>_<namespace>_<container>-<id>.log and pointing at its 0.log.
func layoutPodLogs(dir string, pods []Pod) error {
	links := filepath.Join(filepath.Dir(dir), "containers")
	for _, p := range pods {
		for _, c := range p.Containers {
			cdir := filepath.Join(dir, fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), c.Name)
			if err := os.MkdirAll(cdir, 0o755); err != nil {
				return fmt.Errorf("lay out pod logs: %w", err)
			}
			if c.ID == "" {
				continue
			}
			if err := os.MkdirAll(links, 0o755); err != nil {
				return fmt.Errorf("lay out pod logs: %w", err)
			}
			link := filepath.Join(links, fmt.Sprintf("%s_%s_%s-%s.log", p.Name, p.Namespace, c.Name, c.ID))
			_ = os.Remove(link) // a link left by an earlier run
			if err := os.Symlink(filepath.Join(cdir, "0.log"), link); err != nil {
				return fmt.Errorf("lay out pod logs: %w", err)
			}
		}
	}
	return nil
}

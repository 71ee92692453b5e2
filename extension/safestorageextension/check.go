package safestorageextension

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// checkEnv makes a process started from this binary check one database and exit (init below).
// bbolt reaches a damaged file's pages through its memory map: a truncated file faults
// (SIGBUS), which no recover() catches, and some of its panics come from goroutines of its
// own. A child process is the only place where both end the check and not the collector.
const checkEnv = "OTELCOL_SAFE_FILE_STORAGE_CHECK"

// verdictPrefix marks the child's answer on its stdout.
const verdictPrefix = "safe_file_storage verdict: "

type status string

const (
	statusOK        status = "ok"
	statusCorrupt   status = "corrupt"
	statusUndecided status = "undecided" // the file could not be checked; it is left alone
)

type verdict struct {
	Status status `json:"status"`
	Damage string `json:"damage,omitempty"` // what the check found, or why it decided nothing
}

func init() {
	path := os.Getenv(checkEnv)
	if path == "" {
		return
	}
	timeout, _ := time.ParseDuration(os.Getenv(checkEnv + "_LOCK_TIMEOUT"))
	out, _ := json.Marshal(checkFile(path, timeout))
	fmt.Fprintf(os.Stdout, "%s%s\n", verdictPrefix, out)
	os.Exit(0)
}

// checkFile runs bbolt's own consistency check on a read-only open of path. It may panic or
// fault on a damaged file: run it only in the child.
func checkFile(path string, lockTimeout time.Duration) verdict {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: lockTimeout})
	if err != nil {
		// Held by another process, or not ours to read: nothing said about the content.
		if errors.Is(err, berrors.ErrTimeout) || errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			return verdict{Status: statusUndecided, Damage: err.Error()}
		}
		return verdict{Status: statusCorrupt, Damage: "open: " + err.Error()}
	}
	defer db.Close()
	var found []string
	_ = db.View(func(tx *bbolt.Tx) error {
		for e := range tx.Check() {
			// The first few say what is wrong; a torn file can yield thousands.
			if len(found) < 3 {
				found = append(found, e.Error())
			}
		}
		return nil
	})
	if len(found) == 0 {
		return verdict{Status: statusOK}
	}
	// bbolt keeps two meta pages and opens on the valid one (the last transaction of the
	// other is what is lost), but its Check stops at a damaged one. Then every bucket, key
	// and value is read instead, which reaches every page a component can.
	if metaOnly(found) {
		if err := readAll(db); err == nil {
			return verdict{Status: statusOK, Damage: "check: " + strings.Join(found, "; ")}
		}
	}
	return verdict{Status: statusCorrupt, Damage: "check: " + strings.Join(found, "; ")}
}

func metaOnly(found []string) bool {
	for _, f := range found {
		if !strings.Contains(f, "page 0: ") && !strings.Contains(f, "page 1: ") {
			return false
		}
	}
	return true
}

// readAll reads every key and value of every bucket; a damaged page panics (bbolt's page
// check) or faults, which ends the child.
func readAll(db *bbolt.DB) error {
	var walk func(b *bbolt.Bucket) error
	walk = func(b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				if nested := b.Bucket(k); nested != nil {
					return walk(nested)
				}
			}
			return nil
		})
	}
	return db.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bbolt.Bucket) error { return walk(b) })
	})
}

// checkInChild checks path in a child process of this binary and reads its verdict. A child
// that dies of the file (a Go panic or fault exits 2, a signal such as SIGBUS or SIGSEGV) is
// a corrupt file; one killed (SIGKILL: the OOM killer), timed out or never started decides
// nothing.
func checkInChild(ctx context.Context, path string, timeout, lockTimeout time.Duration) verdict {
	exe := "/proc/self/exe" // the running binary even when an upgrade replaced the file
	if _, err := os.Stat(exe); err != nil {
		if exe, err = os.Executable(); err != nil {
			return verdict{Status: statusUndecided, Damage: fmt.Sprintf("find the collector's binary: %v", err)}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), checkEnv+"="+path, checkEnv+"_LOCK_TIMEOUT="+lockTimeout.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), verdictPrefix); ok {
			var v verdict
			if jerr := json.Unmarshal([]byte(rest), &v); jerr == nil {
				return v
			}
		}
	}
	if ctx.Err() != nil {
		return verdict{Status: statusUndecided, Damage: fmt.Sprintf("the check did not end within %v", timeout)}
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return verdict{Status: statusUndecided, Damage: fmt.Sprintf("run the check: %v", err)}
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return verdict{Status: statusUndecided, Damage: "the check was killed (SIGKILL)"}
	}
	return verdict{Status: statusCorrupt, Damage: "bbolt crashed reading it: " + firstLine(stderr.String(), exit)}
}

// firstLine is the start of the child's crash report: "panic: …" or "unexpected fault address …".
func firstLine(s string, exit *exec.ExitError) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 300 {
				l = l[:300]
			}
			return l
		}
	}
	return exit.String()
}

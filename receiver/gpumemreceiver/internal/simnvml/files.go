package simnvml

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// fileRecord is one line to append to a file at a scenario time.
type fileRecord struct {
	at     time.Duration
	path   string
	event  *Event // a kmsg record; nil for a log line
	line   string // the log line
	format string // how a container runtime would wrap the line; "" for as it is
}

// fileWriter appends the scenario's kmsg records and log lines to their
// files as they come due.
type fileWriter struct {
	sim   *Sim
	recs  []fileRecord
	tl    timeline
	paths []string // every file it owns

	mu   sync.Mutex
	next int64
	seq  uint64

	stop chan struct{}
	done chan struct{}
}

func newFileWriter(s *Sim) *fileWriter {
	w := &fileWriter{sim: s}
	if s.opts.KmsgPath != "" {
		w.paths = append(w.paths, s.opts.KmsgPath)
		for i := range s.scn.Events {
			if e := &s.scn.Events[i]; e.Via != ViaNVML {
				w.recs = append(w.recs, fileRecord{at: e.At, path: s.opts.KmsgPath, event: e})
			}
		}
	}
	if s.opts.LogDir != "" {
		for _, l := range s.scn.LogLines {
			p := filepath.Join(s.opts.LogDir, l.Path)
			if !slices.Contains(w.paths, p) {
				w.paths = append(w.paths, p)
			}
			w.recs = append(w.recs, fileRecord{at: l.At, path: p, line: l.Line, format: l.Format})
		}
	}
	// Stable: records at the same time keep scenario order, events first.
	slices.SortStableFunc(w.recs, func(a, b fileRecord) int { return cmp.Compare(a.at, b.at) })
	w.tl = timeline{loop: s.scn.Duration}
	for _, r := range w.recs {
		w.tl.ats = append(w.tl.ats, r.at)
	}
	return w
}

// Start creates (or empties) the kmsg file and the log files, then appends
// each record at its scenario time from a goroutine until Stop. Records due
// before Start are not written. Without a kmsg path or log directory it does
// nothing.
func (s *Sim) Start() error {
	s.writerMu.Lock()
	defer s.writerMu.Unlock()
	if s.writer != nil {
		return errors.New("start simulator: already started")
	}
	w := newFileWriter(s)
	if s.opts.PodLogsDir != "" {
		if err := layoutPodLogs(s.opts.PodLogsDir, s.scn.Pods); err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
	}
	if len(w.paths) == 0 {
		return nil
	}
	for _, p := range w.paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
		if err := resetFile(p); err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
	}
	w.next = w.tl.firstFrom(s.elapsed())
	w.stop, w.done = make(chan struct{}), make(chan struct{})
	s.writer = w
	go w.run(s.opts.FlushInterval, s.opts.OnError)
	return nil
}

// Stop ends the writer goroutine and waits for it. Safe without Start.
func (s *Sim) Stop() {
	s.writerMu.Lock()
	w := s.writer
	s.writer = nil
	s.writerMu.Unlock()
	if w == nil {
		return
	}
	close(w.stop)
	<-w.done
}

// Flush writes every record due by now, without waiting for the goroutine's
// next tick. Tests stepping a fake clock call it.
func (s *Sim) Flush() error {
	s.writerMu.Lock()
	w := s.writer
	s.writerMu.Unlock()
	if w == nil {
		return nil
	}
	return w.flush()
}

func (w *fileWriter) run(every time.Duration, onError func(error)) {
	defer close(w.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
			if err := w.flush(); err != nil && onError != nil {
				onError(err)
			}
		}
	}
}

func (w *fileWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	el := w.sim.elapsed()
	w.next = w.tl.catchUp(w.next, el)
	var errs []error
	for {
		t, ok := w.tl.at(w.next)
		if !ok || t > el {
			break
		}
		r := w.recs[w.tl.item(w.next)]
		w.next++
		text := r.line
		if r.event != nil {
			pci := w.sim.devices[r.event.GPU].pci
			text = kmsgRecord(w.seq, w.sim.start.Add(t).Sub(w.sim.boot), xidText(*r.event, pci))
			w.seq++
		} else {
			text = runtimeLines(r.format, w.sim.start.Add(t), text)
		}
		if err := appendFile(r.path, text); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resetFile empties path, creating it, unless it is a FIFO (or another non-regular file):
// that is left as it is, since opening it for writing could block until a reader comes.
func resetFile(path string) error {
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return nil
	}
	return os.WriteFile(path, nil, 0o644)
}

// fifoWriteTimeout bounds a write to a FIFO whose reader does not drain it, so Stop never
// waits on a stalled reader for long.
const fifoWriteTimeout = time.Second

// appendFile appends text with one write, so a tailing reader sees whole lines. It never
// blocks on a FIFO: without a reader the open fails (ENXIO) and the record is lost, as a
// kernel record is when nobody reads /dev/kmsg in time.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	// Only pollable files (FIFOs) take a deadline; a regular file answers ErrNoDeadline.
	_ = f.SetWriteDeadline(time.Now().Add(fifoWriteTimeout))
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return nil
}

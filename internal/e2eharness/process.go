package e2eharness

import (
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// StopGrace is how long Stop waits after its signal before it kills the process.
const StopGrace = 15 * time.Second

// Process is a program a test runs, and may signal, kill and start again (a restart runs a
// fresh command from the same recipe, with the same Output). When the test ends it is
// stopped with SIGTERM, and its output is logged if the test failed.
type Process struct {
	t      testing.TB
	name   string
	recipe func() *exec.Cmd
	out    *Output

	mu   sync.Mutex
	cmd  *exec.Cmd     // the running command; nil when stopped
	last *exec.Cmd     // the command of the latest run
	done chan struct{} // closed when cmd has exited; err then holds Wait's answer
	err  error
}

// NewProcess prepares argv (the program and its arguments) with env (nil: the test's own
// environment) without starting it.
func NewProcess(t testing.TB, name string, env []string, argv ...string) *Process {
	return newProcess(t, name, func() *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		return cmd
	})
}

// Start runs argv with env (nil: the test's own environment).
func Start(t testing.TB, name string, env []string, argv ...string) *Process {
	t.Helper()
	p := NewProcess(t, name, env, argv...)
	p.Start()
	return p
}

// StartCmd runs a prepared command (its own directory, environment, files); such a process
// cannot be started a second time.
func StartCmd(t testing.TB, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	used := false
	p := newProcess(t, name, func() *exec.Cmd {
		if used {
			return nil
		}
		used = true
		return cmd
	})
	p.Start()
	return p
}

func newProcess(t testing.TB, name string, recipe func() *exec.Cmd) *Process {
	p := &Process{t: t, name: name, recipe: recipe, out: &Output{}}
	t.Cleanup(func() {
		p.Stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.out.String())
		}
	})
	return p
}

// Start runs the process, again if it ran before (it must have been stopped or have exited).
func (p *Process) Start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	require.True(p.t, p.cmd == nil || p.exitedLocked(), "start %s: it is still running", p.name)
	cmd := p.recipe()
	require.NotNil(p.t, cmd, "start %s: a prepared command runs once", p.name)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	require.NoError(p.t, cmd.Start(), "start %s", p.name)
	p.cmd, p.last, p.done, p.err = cmd, cmd, make(chan struct{}), nil
	// One goroutine waits, so that a test notices a process that exits early (a config
	// error) instead of polling until its timeout.
	go func(cmd *exec.Cmd, done chan struct{}) {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}(cmd, p.done)
}

// Stop sends sig and waits for the exit, killing the process after StopGrace. It says
// whether the process had to be killed and what it exited with (nil for a clean exit, and
// when it was not running).
func (p *Process) Stop(sig syscall.Signal) (killed bool, err error) {
	return p.StopWithin(sig, StopGrace)
}

// StopWithin is Stop with its own grace period.
func (p *Process) StopWithin(sig syscall.Signal, grace time.Duration) (killed bool, err error) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return false, nil
	}
	select {
	case <-done:
	default:
		_ = cmd.Process.Signal(sig)
		select {
		case <-done:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			<-done
			killed = true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	err = p.err
	if p.cmd == cmd {
		p.cmd = nil
	}
	return killed, err
}

// Kill ends the process at once (SIGKILL) and waits for it.
func (p *Process) Kill() {
	_, _ = p.StopWithin(syscall.SIGKILL, time.Minute)
}

// Signal sends sig to the running process.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	return p.cmd.Process.Signal(sig)
}

// Exited says whether the process is not running: it ended by itself, or was stopped.
func (p *Process) Exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd == nil || p.exitedLocked()
}

func (p *Process) exitedLocked() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed when the current run has exited; nil before the first Start.
func (p *Process) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Err is what the last run exited with; nil while it runs or after a clean exit.
func (p *Process) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Pid is the current run's process id; 0 when it is not running.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Args are the latest run's arguments, after the program; nil before the first Start.
func (p *Process) Args() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return nil
	}
	return p.last.Args[1:]
}

// Name is what the process is called in messages.
func (p *Process) Name() string { return p.name }

// Output is everything every run has written so far.
func (p *Process) Output() string { return p.out.String() }

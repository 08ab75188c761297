package hooks

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/armadra/ama-rpc/internal/childenv"
)

// OutputCap bounds the captured stdout and stderr of one hook (each).
const OutputCap = 1 << 20

// KillGrace is the wait between SIGTERM and SIGKILL to the group.
const KillGrace = time.Second

// Shell runs hook commands.
var Shell = "/bin/sh"

// Proc is the raw result of one hook process.
type Proc struct {
	// ExitCode is nil when the hook timed out or was killed by a signal.
	ExitCode *int
	TimedOut bool
	Aborted  bool
	Stdout   string
	Stderr   string
	Duration time.Duration
}

// Spec is what Run needs to start one command.
type Spec struct {
	Command string
	Dir     string
	Env     []string
	Stdin   []byte
	Timeout time.Duration
}

// Run runs one command with /bin/sh -c in its own process group, writes
// Stdin and closes it (EPIPE ignored), captures up to OutputCap of each
// stream, and on timeout or ctx's end sends SIGTERM to the group, then
// SIGKILL KillGrace later. It returns once the shell has been reaped.
func Run(ctx context.Context, s Spec) Proc {
	start := time.Now()
	var stdout, stderr capBuf
	cmd := exec.Command(Shell, "-c", s.Command)
	env := s.Env
	if env == nil {
		env = childenv.Environ(childenv.Policy{})
	}
	cmd.Dir, cmd.Env = s.Dir, env
	cmd.Stdin = &stdinReader{b: s.Stdin}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A background grandchild may keep the pipes open after the shell
	// exited; bound that wait.
	cmd.WaitDelay = KillGrace
	if err := cmd.Start(); err != nil {
		code := 127
		return Proc{ExitCode: &code, Stderr: err.Error(), Duration: time.Since(start)}
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(s.Timeout)
	defer timer.Stop()
	var p Proc
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		p.TimedOut = true
		err = kill(pgid, done)
	case <-ctx.Done():
		p.Aborted = true
		err = kill(pgid, done)
	}
	// Whatever the shell left behind in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	p.Duration = time.Since(start)
	p.Stdout, p.Stderr = stdout.String(), stderr.String()
	var ee *exec.ExitError
	switch {
	case p.TimedOut || p.Aborted:
	case err == nil:
		code := 0
		p.ExitCode = &code
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			break
		}
		code := ee.ExitCode()
		p.ExitCode = &code
	case errors.Is(err, exec.ErrWaitDelay):
		code := cmd.ProcessState.ExitCode()
		if code >= 0 {
			p.ExitCode = &code
		}
	default:
		code := 127
		p.ExitCode = &code
		p.Stderr += err.Error()
	}
	return p
}

// kill sends SIGTERM to the group, SIGKILL after KillGrace, and waits for
// the shell.
func kill(pgid int, done <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(KillGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-done
	}
}

// capBuf keeps the first OutputCap bytes written and discards the rest
// (still reporting them written, so the copy goroutine drains the pipe).
type capBuf struct {
	mu  sync.Mutex
	buf []byte
}

func (c *capBuf) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := OutputCap - len(c.buf); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		c.buf = append(c.buf, p[:room]...)
	}
	return len(p), nil
}

func (c *capBuf) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// stdinReader is a bytes reader that os/exec copies into the pipe (it
// ignores EPIPE from a hook that does not read).
type stdinReader struct {
	b []byte
	i int
}

func (r *stdinReader) Read(p []byte) (int, error) {
	if r.i >= len(r.b) {
		return 0, errEOF
	}
	n := copy(p, r.b[r.i:])
	r.i += n
	return n, nil
}

package tools

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// StartedCommand is a command a sandbox's pre-started launcher started
// (package sandbox, Proc): Wait returns its exit code (128+n for signal n,
// everything it started ended with it) or an error when the launcher
// ended under it, Signal reaches its process group, PID is its process id
// here (0: unknown).
type StartedCommand = interface {
	Wait() (int, error)
	Signal(syscall.Signal) error
	PID() int
}

// CommandStarter is a CommandSandbox that can start a foreground command
// through a launcher it keeps running (no launcher exec per call). Any
// error means: start it with Wrap instead.
type CommandStarter interface {
	StartCommand(path string, argv, env []string, dir string, stdin, stdout, stderr *os.File) (StartedCommand, error)
}

// proc is a running foreground command, whichever way it was started.
type proc struct {
	// stop ends it: SIGTERM to its group, SIGKILL after grace unless done
	// was closed.
	stop func(done <-chan struct{}, grace time.Duration)
	// wait waits for it and its output; waitDelay reports output still
	// held open after the grace (exec.ErrWaitDelay).
	wait func() (ps exitState, waitDelay bool)
}

type exitState struct {
	code   *int
	signal string
	// note says why the end is unknown (the sandbox's launcher ended).
	note string
}

// cmdProc is a started exec.Cmd.
func cmdProc(cmd *exec.Cmd) proc {
	pid := cmd.Process.Pid
	return proc{
		stop: func(done <-chan struct{}, grace time.Duration) { stopGroup(pid, done, grace) },
		wait: func() (exitState, bool) {
			err := cmd.Wait()
			var st exitState
			if ps := cmd.ProcessState; ps != nil {
				if ps.Exited() {
					c := ps.ExitCode()
					st.code = &c
				} else if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					st.signal = ws.Signal().String()
				}
			}
			return st, errors.Is(err, exec.ErrWaitDelay)
		},
	}
}

// startInLauncher starts cmd (prepared by newShellCmd) through the
// sandbox's launcher with its output copied into out; ok false means it
// was not started (use Wrap).
func startInLauncher(st CommandStarter, cmd *exec.Cmd, out io.Writer) (proc, bool) {
	r, w, err := os.Pipe()
	if err != nil {
		return proc{}, false
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		r.Close()
		w.Close()
		return proc{}, false
	}
	p, err := st.StartCommand(cmd.Path, cmd.Args, cmd.Env, cmd.Dir, null, w, w)
	null.Close()
	w.Close()
	if err != nil {
		r.Close()
		return proc{}, false
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, r)
	}()
	return proc{
		stop: func(done <-chan struct{}, grace time.Duration) {
			stopWith(func(s syscall.Signal) { _ = p.Signal(s) }, done, grace)
		},
		wait: func() (exitState, bool) {
			code, err := p.Wait()
			// Its PID namespace ended with it, so every writer of the
			// pipe is gone; the grace only bounds the copy.
			late := false
			t := time.NewTimer(bashPipeGrace)
			select {
			case <-copied:
			case <-t.C:
				late = true
			}
			t.Stop()
			r.Close()
			<-copied
			if err != nil {
				return exitState{note: launcherGone(err)}, late
			}
			return exitState{code: &code}, late
		},
	}, true
}

// launcherGone is the note for a command whose launcher ended under it
// (killed from outside, or ama-rpc's end): the command ended with it.
func launcherGone(err error) string {
	return "The OS sandbox's launcher ended while the command ran, so the command and its child processes were stopped (" +
		strings.TrimSpace(err.Error()) + "); its exit code is unknown. Run it again if it is still needed."
}

// startJobInLauncher starts a background job (cmd prepared by
// newShellCmd) through the sandbox's launcher, its output written to out
// (ama-rpc's descriptor, passed to the command); ok false means it was not
// started (use Wrap).
func startJobInLauncher(st CommandStarter, cmd *exec.Cmd, out *os.File) (jobProc, bool) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return jobProc{}, false
	}
	p, err := st.StartCommand(cmd.Path, cmd.Args, cmd.Env, cmd.Dir, null, out, out)
	null.Close()
	if err != nil {
		return jobProc{}, false
	}
	return jobProc{
		pid:    p.PID(),
		signal: func(s syscall.Signal) { _ = p.Signal(s) },
		wait: func() (*int, string) {
			code, err := p.Wait()
			if err != nil {
				return nil, launcherGone(err)
			}
			return &code, ""
		},
	}, true
}

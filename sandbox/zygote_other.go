//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// ErrNoLauncher means the command cannot go through a pre-started
// launcher: start it with Wrap instead.
var ErrNoLauncher = errors.New("sandbox: no pre-started launcher for this command")

type zygote struct{}

// Proc is a command started by a pre-started launcher (Linux only).
type Proc struct{}

// Wait is never reached: Start always fails here.
func (p *Proc) Wait() (int, error) { return -1, ErrNoLauncher }

// Signal is never reached: Start always fails here.
func (p *Proc) Signal(syscall.Signal) error { return ErrNoLauncher }

// PID is never reached: Start always fails here.
func (p *Proc) PID() int { return 0 }

// CPU is never reached: Start always fails here.
func (p *Proc) CPU() time.Duration { return 0 }

// Start has no pre-started launcher on this platform.
func (c *Command) Start(string, []string, []string, string, *os.File, *os.File, *os.File) (*Proc, error) {
	return nil, ErrNoLauncher
}

// CloseLaunchers has nothing to end here.
func (r *Runtime) CloseLaunchers() {}

// CloseSession has nothing to end here.
func (r *Runtime) CloseSession(project, output string) {}

// runAlone has no launcher on this platform.
func (r *Runtime) runAlone(Policy, string, []string, []string, string, *os.File, time.Duration) (int, string, error) {
	return 0, "", ErrNoLauncher
}

// CloseLaunchers has nothing to end here.
func (c *Command) CloseLaunchers() {}

// StartCommand has no pre-started launcher on this platform.
func (c *Command) StartCommand(string, []string, []string, string, *os.File, *os.File, *os.File) (interface {
	Wait() (int, error)
	Signal(syscall.Signal) error
	PID() int
}, error) {
	return nil, ErrNoLauncher
}

//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the command the leader of a new process group, so
// that it and everything it starts can be signalled together.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup asks the process group led by pid to exit (SIGTERM).
func terminateGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }

// killGroup kills the process group led by pid (SIGKILL).
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

package codemode

import "syscall"

// scriptProcAttr puts the script child in a process group of its own (so
// that a kill reaches everything it started) and has the kernel kill it if
// ama-rpc dies first, so no script outlives its server.
func scriptProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

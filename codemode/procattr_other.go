//go:build !linux

package codemode

import "syscall"

// scriptProcAttr: a process group of its own. There is no parent-death
// signal off Linux: a script whose ama-rpc was killed (not merely ended:
// an ending server kills its scripts) runs on until it ends by itself or
// its next message meets the closed pipe (SIGPIPE).
func scriptProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

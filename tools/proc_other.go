//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// Without process groups only the shell itself can be signalled.

func setProcessGroup(cmd *exec.Cmd) {}

func terminateGroup(pid int) { killGroup(pid) }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

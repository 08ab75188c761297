//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
)

func detect(*Runtime, bool, bool) Status {
	return Status{Mechanism: "none", Detail: "no OS sandbox on this platform (Landlock is Linux-only)"}
}

func setupProc(*exec.Cmd, Policy) error { return errors.New("sandbox: not supported on this platform") }

func newRuleset(Policy) (*os.File, uint32, error) {
	return nil, 0, errors.New("sandbox: not supported on this platform")
}

func openPTY() (string, func(), error) {
	return "", nil, errors.New("sandbox: not supported on this platform")
}

func jailRules(Policy) string { return "" }

func ownDir(string) error { return errors.New("sandbox: not supported on this platform") }

func readUnixSocketTable() []byte { return nil }

//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processAlive reports whether pid names a live process: kill(pid, 0)
// succeeds or fails with EPERM (alive, owned by someone else); ESRCH means
// dead.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}

//go:build unix

package session

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) this process has used so
// far, or ok = false if it is not available.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

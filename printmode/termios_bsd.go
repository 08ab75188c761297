//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package printmode

import "golang.org/x/sys/unix"

// ioctlGetTermios is the request that reads a terminal's settings.
const ioctlGetTermios = unix.TIOCGETA

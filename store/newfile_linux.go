//go:build linux

package store

import (
	"errors"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// openAnon opens a new file without a name in dir (O_TMPFILE, mode 0600)
// for writeAnon, which links it under its name once written and synced.
// It fails with errNoAnon where that cannot work (a kernel or file system
// without O_TMPFILE, no /proc to link from).
func openAnon(dir string) (*os.File, error) {
	if !procFDs() {
		return nil, errNoAnon
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_APPEND|unix.O_CLOEXEC, 0o600)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return nil, errNoAnon
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// linkAnon gives the file openAnon made its name; the error wraps
// fs.ErrExist if the name is taken (nothing is replaced). linkat through
// /proc/self/fd needs no privilege (AT_EMPTY_PATH does before Linux 6.10).
func linkAnon(fd *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(fd.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: fd.Name(), New: path, Err: err}
	}
	return nil
}

// procFDs reports whether /proc/self/fd is there to link from.
var procFDs = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
})

//go:build unix

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// identity reports whether path names the file open as fd, and fd's
// size: fstat and stat into stack buffers (os.Stat would allocate two
// FileInfos per append). A missing path is an fs.ErrNotExist.
func identity(fd *os.File, path string) (same bool, size int64, err error) {
	var mine, at unix.Stat_t
	if err := unix.Fstat(int(fd.Fd()), &mine); err != nil {
		return false, 0, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := unix.Stat(path, &at); err != nil {
		return false, 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return mine.Dev == at.Dev && mine.Ino == at.Ino, mine.Size, nil
}

//go:build unix

package checkpoint

import (
	"errors"
	"io/fs"
	"syscall"
)

// openNoFollow makes opening a symlink fail and opening a FIFO not block.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// linkCount is the number of hard links of the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// isLoop reports the error of opening a symlink with O_NOFOLLOW.
func isLoop(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}

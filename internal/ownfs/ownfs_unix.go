//go:build unix

package ownfs

import (
	"io/fs"
	"syscall"
)

// oNonblock makes opening a FIFO return at once (it is then refused as
// not regular) instead of waiting for a writer.
const oNonblock = syscall.O_NONBLOCK

const oNoFollow = syscall.O_NOFOLLOW

func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// owner is the uid that owns the file fi describes.
func owner(fi fs.FileInfo) (uint32, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid, true
	}
	return 0, false
}

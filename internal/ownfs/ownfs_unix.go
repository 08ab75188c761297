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

//go:build unix

package store_test

import (
	"os"
	"syscall"
)

// nlink returns the number of names of fi's file (0 if unknown).
func nlink(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

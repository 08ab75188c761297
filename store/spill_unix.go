//go:build unix

package store

import (
	"os"

	"golang.org/x/sys/unix"
)

const canMap = true

// mapFile maps n bytes of fd at off (a multiple of the page size)
// read-only and shared: the pages are the file's page cache.
func mapFile(fd *os.File, off int64, n int) ([]byte, error) {
	return unix.Mmap(int(fd.Fd()), off, n, unix.PROT_READ, unix.MAP_SHARED)
}

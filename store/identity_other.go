//go:build !unix

package store

import "os"

// identity reports whether path names the file open as fd, and fd's size.
func identity(fd *os.File, path string) (same bool, size int64, err error) {
	mine, err := fd.Stat()
	if err != nil {
		return false, 0, err
	}
	at, err := os.Stat(path)
	if err != nil {
		return false, 0, err
	}
	return os.SameFile(mine, at), mine.Size(), nil
}

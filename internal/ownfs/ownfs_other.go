//go:build !unix

package ownfs

import "io/fs"

const (
	oNonblock = 0
	oNoFollow = 0
)

func links(fs.FileInfo) uint64 { return 1 }

//go:build !unix

package ownfs

import "io/fs"

const (
	oNonblock = 0
	oNoFollow = 0
)

func links(fs.FileInfo) uint64 { return 1 }

func owner(fs.FileInfo) (uint32, bool) { return 0, false }

//go:build !unix

package store_test

import "os"

// nlink returns the number of names of fi's file (0 if unknown).
func nlink(os.FileInfo) uint64 { return 0 }

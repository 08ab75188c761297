//go:build !linux

package tools

import (
	"context"
	"io/fs"
	"os"
)

// readDir lists a directory opened without blocking, sorted by name
// (like os.ReadDir).
func readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|openExtraFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: errNotDir}
	}
	return readDirCtx(ctx, f)
}

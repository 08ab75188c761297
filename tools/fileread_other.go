//go:build !unix

package tools

import "os"

// walkFile: see fileread_unix.go; elsewhere an *os.File.
type walkFile struct{ *os.File }

func openWalkFile(p string, _ bool) (walkFile, int64, error) {
	f, fi, err := openRegular(p)
	if err != nil {
		return walkFile{}, 0, err
	}
	return walkFile{f}, fi.Size(), nil
}

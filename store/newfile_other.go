//go:build !linux

package store

import (
	"bytes"
	"os"
)

// openAnon fails: without O_TMPFILE writeAnon's callers fall back to a
// temporary file (newfile_linux.go).
func openAnon(string) (*os.File, error) { return nil, errNoAnon }

func linkAnon(*os.File, string) error { return errNoAnon }

// createExcl creates path with O_EXCL (mode 0600) holding data; a taken
// name fails with an error wrapping fs.ErrExist. A failed write removes
// the file again. It keeps no descriptor (-1): no lock is linked here.
func createExcl(path string, data []byte) (int, error) {
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return -1, err
	}
	_, werr := fd.Write(data)
	if cerr := fd.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return -1, werr
	}
	return -1, nil
}

func linkLock(int, string) error { return errNoAnon }

func dupFD(int) int { return -1 }

func closeFD(int) {}

// holds reports whether the file at path holds exactly want; false if it
// cannot be read.
func holds(path string, want []byte) bool {
	content, err := os.ReadFile(path)
	return err == nil && bytes.Equal(content, want)
}

// openDir opens a directory to fsync it.
func openDir(dir string) (*os.File, error) { return os.Open(dir) }

// syncsNewName: elsewhere the directory of a new name is fsynced.
func syncsNewName(*os.File) bool { return false }

//go:build !linux

package store

import "os"

// openAnon fails: without O_TMPFILE writeAnon's callers fall back to a
// temporary file (newfile_linux.go).
func openAnon(string) (*os.File, error) { return nil, errNoAnon }

func linkAnon(*os.File, string) error { return errNoAnon }

package store

import (
	"path/filepath"
	"strings"
	"time"
)

// FileSuffix is the extension of session files.
const FileSuffix = ".jsonl"

// EncodeCwd turns a working directory into a directory name (§5.1): leading
// '/' and '\' are stripped, then every '/', '\' and ':' becomes '-'.
func EncodeCwd(cwd string) string {
	cwd = strings.TrimLeft(cwd, `/\`)
	return strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':':
			return '-'
		}
		return r
	}, cwd)
}

// SessionDir returns the directory that holds the sessions of cwd under the
// sessions root base: <base>/<encoded cwd>.
func SessionDir(base, cwd string) string { return filepath.Join(base, EncodeCwd(cwd)) }

// FileName returns the file name of a session created at t with id:
// the ISO time with ':' and '.' replaced by '-', '_', the id, ".jsonl"
// (2026-10-02T05-23-11-123Z_<id>.jsonl).
func FileName(t time.Time, id string) string {
	b := t.UTC().AppendFormat(make([]byte, 0, 32+len(id)+len(FileSuffix)), TimeFormat)
	for i, c := range b {
		if c == ':' || c == '.' {
			b[i] = '-'
		}
	}
	b = append(append(append(b, '_'), id...), FileSuffix...)
	return string(b)
}

// IDFromFileName returns the session id encoded in a session file name (or
// path): the text between the first '_' and ".jsonl". ok is false when the
// name does not follow that pattern.
func IDFromFileName(name string) (id string, ok bool) {
	stem, found := strings.CutSuffix(filepath.Base(name), FileSuffix)
	if !found {
		return "", false
	}
	_, id, found = strings.Cut(stem, "_")
	return id, found
}

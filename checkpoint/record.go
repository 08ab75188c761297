package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Skip reasons: the values of Record.Skipped and Skip.Reason (the
// protocol's CodeRestoreResult skipped[].reason).
const (
	SkipSymlink       = "symlink"
	SkipHardlink      = "hardlink"
	SkipNotRegular    = "not_regular"
	SkipParentMoved   = "parent_moved"
	SkipTooLarge      = "too_large"
	SkipBackupMissing = "backup_missing"
)

// AfterAbsent is Record.After for a path the agent left without a file.
const AfterAbsent = "absent"

// Record is what a path held before a turn changed it: one value of
// ama.checkpoint files{} and of ama.checkpoint-track record.
//
//   - Blob: the content hash; nil = no file existed (rewind deletes it).
//   - Mode: permission bits in Unix form (0o7777 mask, incl. setuid,
//     setgid, sticky); 0 = unknown. Size: bytes. Both are written to JSON
//     whenever the path was a regular file, even when zero.
//   - RealParentDir: the real path (symlinks resolved) of the parent
//     directory; for a missing parent, the real path of the deepest
//     existing ancestor joined with the missing names. Rewind refuses to
//     write when it no longer matches (parent_moved).
//   - Skipped: set when no content was kept (SkipSymlink, SkipHardlink,
//     SkipNotRegular, SkipTooLarge, or SkipBackupMissing when reading or
//     storing failed); Blob is nil then.
//   - After: what the agent left at the path (Turn.After): a content hash,
//     AfterAbsent, or "" = unknown. Rewind uses it to detect changes made
//     by someone else (conflicts).
type Record struct {
	Blob          *string `json:"blob"`
	Mode          uint32  `json:"mode,omitempty"`
	Size          int64   `json:"size,omitempty"`
	RealParentDir string  `json:"realParentDir,omitempty"`
	Skipped       string  `json:"skipped,omitempty"`
	After         string  `json:"after,omitempty"`
}

// recordJSON fixes the key order (blob, mode, size, realParentDir,
// skipped, after) and lets mode/size be written when zero.
type recordJSON struct {
	Blob          *string `json:"blob"`
	Mode          *uint32 `json:"mode,omitempty"`
	Size          *int64  `json:"size,omitempty"`
	RealParentDir string  `json:"realParentDir,omitempty"`
	Skipped       string  `json:"skipped,omitempty"`
	After         string  `json:"after,omitempty"`
}

// MarshalJSON writes blob always (null for "did not exist") and mode and
// size whenever the record describes a regular file.
func (r Record) MarshalJSON() ([]byte, error) {
	j := recordJSON{Blob: r.Blob, RealParentDir: r.RealParentDir, Skipped: r.Skipped, After: r.After}
	if r.Blob != nil || r.Mode != 0 || r.Size != 0 {
		j.Mode, j.Size = &r.Mode, &r.Size
	}
	return json.Marshal(j)
}

// Snapshot records what absPath holds now, without following a symlink at
// the path itself (Lstat):
//
//   - nothing there → Blob nil (with RealParentDir when resolvable);
//   - a symlink → Skipped "symlink"; anything not a regular file →
//     "not_regular"; a regular file with more than one link → "hardlink";
//     larger than the cap → "too_large" (these keep no content);
//   - a regular file → its bytes are Put and Blob is their hash.
//
// The error is non-nil only when the state could not be read or stored;
// the Record is then still usable and has Skipped "backup_missing", so a
// rewind reports the file instead of silently ignoring it. absPath should
// be absolute (a relative path is taken relative to the process).
func (s *Store) Snapshot(absPath string) (Record, error) {
	abs, err := filepath.Abs(absPath)
	if err != nil {
		return Record{Skipped: SkipBackupMissing}, fmt.Errorf("checkpoint %s: %w", absPath, err)
	}
	realParent := func() string {
		real, _, err := realDir(filepath.Dir(abs))
		if err != nil {
			return ""
		}
		return real
	}
	fi, err := os.Lstat(abs)
	switch {
	case isNotExist(err):
		return Record{RealParentDir: realParent()}, nil
	case err != nil:
		return Record{Skipped: SkipBackupMissing}, fmt.Errorf("checkpoint %s: %w", abs, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return Record{Skipped: SkipSymlink}, nil
	case !fi.Mode().IsRegular():
		return Record{Skipped: SkipNotRegular}, nil
	}
	rec := Record{Mode: unixMode(fi.Mode()), Size: fi.Size(), RealParentDir: realParent()}
	switch {
	case linkCount(fi) > 1:
		rec.Skipped = SkipHardlink
		return rec, nil
	case fi.Size() > s.max:
		rec.Skipped = SkipTooLarge
		return rec, nil
	}
	data, hash, err := readRegular(abs, fi, s.max)
	switch {
	case errors.Is(err, errTooLarge):
		rec.Skipped = SkipTooLarge
		return rec, nil
	case err != nil:
		rec.Skipped = SkipBackupMissing
		return rec, fmt.Errorf("checkpoint %s: %w", abs, err)
	}
	if _, err := s.put(data, hash); err != nil {
		rec.Skipped = SkipBackupMissing
		return rec, fmt.Errorf("checkpoint %s: %w", abs, err)
	}
	rec.Blob, rec.Size = &hash, int64(len(data))
	return rec, nil
}

var (
	errTooLarge     = errors.New("file too large")
	errChanged      = errors.New("file changed while it was read")
	errParentMoved  = errors.New("parent directory moved")
	errNotDirectory = errors.New("not a directory")
)

// readRegular reads the regular file abs that Lstat described as fi,
// refusing to follow a symlink or block on a FIFO swapped in meanwhile.
// It returns the content and its hash when the file holds at most max
// bytes; otherwise data is nil, hash covers the whole file and err is
// errTooLarge.
func readRegular(abs string, fi fs.FileInfo, max int64) (data []byte, hash string, err error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		if isLoop(err) {
			return nil, "", errChanged
		}
		return nil, "", err
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		return nil, "", errChanged
	}
	var buf bytes.Buffer
	buf.Grow(int(min(ofi.Size(), max)) + 1)
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, "", err
	}
	data = buf.Bytes()
	if int64(len(data)) <= max {
		return data, hashBytes(data), nil
	}
	h := newHasher()
	h.Write(data)
	if _, err := io.Copy(h, f); err != nil {
		return nil, "", err
	}
	return nil, h.sum(), errTooLarge
}

// afterState is Record.After for what abs holds now: its content hash,
// AfterAbsent, or "" when it is not a regular file or cannot be read.
func afterState(abs string) string {
	fi, err := os.Lstat(abs)
	if isNotExist(err) {
		return AfterAbsent
	}
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	_, hash, err := readRegular(abs, fi, 0)
	if err != nil && !errors.Is(err, errTooLarge) {
		return ""
	}
	return hash
}

// Key is the name of absPath in records and results: relative to cwd with
// '/' separators when inside cwd, otherwise the cleaned absolute path.
func Key(cwd, absPath string) string {
	abs := filepath.Clean(absPath)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, abs)
	}
	rel, err := filepath.Rel(filepath.Clean(cwd), abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// Path is the absolute path a Key names.
func Path(cwd, key string) string {
	p := filepath.FromSlash(key)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// realDir resolves dir to its real path (exists true). When dir does not
// exist, real is the real path of its deepest existing ancestor joined with
// the missing names (exists false). errParentMoved: a component is not a
// directory, or a missing component is a dangling symlink.
func realDir(dir string) (real string, exists bool, err error) {
	var missing []string
	d := dir
	for {
		r, err := filepath.EvalSymlinks(d)
		if err == nil {
			fi, err := os.Stat(r)
			if err != nil {
				return "", false, err
			}
			if !fi.IsDir() {
				return "", false, errParentMoved
			}
			for i := len(missing) - 1; i >= 0; i-- {
				r = filepath.Join(r, missing[i])
			}
			return r, len(missing) == 0, nil
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return "", false, errParentMoved
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", false, err
		}
		if _, lerr := os.Lstat(d); lerr == nil {
			return "", false, errParentMoved // dangling symlink
		}
		up := filepath.Dir(d)
		if up == d {
			return "", false, err
		}
		missing = append(missing, filepath.Base(d))
		d = up
	}
}

func isNotExist(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR))
}

// unixMode converts Go's mode bits to the Unix form stored in records.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

// fileMode is the inverse of unixMode.
func fileMode(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// lineCount counts lines the way a line diff does: a last line without
// '\n' still counts.
func lineCount(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

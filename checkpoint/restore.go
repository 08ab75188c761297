package checkpoint

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// OnConflict values.
const (
	OnConflictSkip      = "skip"
	OnConflictOverwrite = "overwrite"
)

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// DryRun computes the Result without changing anything.
	DryRun bool
	// OnConflict is OnConflictSkip (default; also for unknown values) or
	// OnConflictOverwrite.
	OnConflict string
}

// Result is the protocol's CodeRestoreResult. Paths are Keys, sorted.
// Restored and Deleted list what was (DryRun: would be) written back or
// removed. Conflicts lists files someone else changed after the agent: with
// OnConflictSkip they are left untouched and appear nowhere else; with
// OnConflictOverwrite they were restored anyway and also appear in Restored
// or Deleted. Insertions and Deletions count the lines changed from the
// current content to the restored content over Restored and Deleted.
// JSON arrays are never null.
type Result struct {
	Restored   []string  `json:"restored"`
	Deleted    []string  `json:"deleted"`
	Conflicts  []string  `json:"conflicts"`
	Skipped    []Skip    `json:"skipped"`
	Failed     []Failure `json:"failed"`
	Insertions int       `json:"insertions"`
	Deletions  int       `json:"deletions"`
}

// Skip is a file left alone for Reason (one of the Skip* constants).
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Failure is a file whose restore failed with Message.
type Failure struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// MarshalJSON writes nil slices as [].
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	p.Restored = nonNil(p.Restored)
	p.Deleted = nonNil(p.Deleted)
	p.Conflicts = nonNil(p.Conflicts)
	p.Skipped = nonNil(p.Skipped)
	p.Failed = nonNil(p.Failed)
	return json.Marshal(p)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// AllFailed reports the protocol's rewind_failed condition: some file
// failed and none was restored or deleted.
func (r Result) AllFailed() bool {
	return len(r.Failed) > 0 && len(r.Restored) == 0 && len(r.Deleted) == 0
}

// Changed is the sorted union of Restored, Deleted and Conflicts: on a
// dry run, the files whose content differs from the checkpoint (what a
// conversation-only rewind note lists).
func (r Result) Changed() []string {
	out := slices.Concat(r.Restored, r.Deleted, r.Conflicts)
	slices.Sort(out)
	return slices.Compact(out)
}

// Restore puts every path of files back into the state its record
// describes. files is keyed by Key (absolute keys inside cwd are accepted
// and reported relative); it is normally the Union of the turns from the
// rewind point to the end. Per path, in this order:
//
//  1. a record with Skipped → Skipped with that reason;
//  2. the current path is a symlink → "symlink", not a regular file →
//     "not_regular";
//  3. current state equal to the record (same content and mode, or both
//     absent) → nothing to do, not listed;
//  4. the record has After and the current state differs from it →
//     conflict (see Result and RestoreOptions.OnConflict);
//  5. the current file has other hard links → "hardlink"; the parent
//     directory no longer resolves to RealParentDir (moved, replaced by a
//     symlink or a file) → "parent_moved"; the blob is not in the store →
//     "backup_missing";
//  6. Blob nil → the file is deleted (Deleted); otherwise the content is
//     written to a temporary file in the same directory, given the
//     recorded mode and renamed over the path (Restored); missing parent
//     directories are created. Directories the turn created are left.
//
// Writes and deletes happen inside the verified parent directory (os.Root)
// and never follow a symlink; a file that changes between the checks and
// the write is Failed. Errors are per file (Failed); Restore itself does
// not fail. Files are handled one at a time in Key order.
func (s *Store) Restore(cwd string, files map[string]Record, opt RestoreOptions) Result {
	cwd = filepath.Clean(cwd)
	res := Result{Restored: []string{}, Deleted: []string{}, Conflicts: []string{}, Skipped: []Skip{}, Failed: []Failure{}}
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		abs := Path(cwd, k)
		key := Key(cwd, abs)
		if seen[key] {
			continue // the same path under two spellings: handled once
		}
		seen[key] = true
		o := s.restoreFile(cwd, abs, key, files[k], opt)
		switch {
		case o.err != nil:
			res.Failed = append(res.Failed, Failure{Path: key, Message: o.err.Error()})
			continue
		case o.skip != "":
			res.Skipped = append(res.Skipped, Skip{Path: key, Reason: o.skip})
			continue
		}
		if o.conflict {
			res.Conflicts = append(res.Conflicts, key)
		}
		switch o.action {
		case actRestored:
			res.Restored = append(res.Restored, key)
		case actDeleted:
			res.Deleted = append(res.Deleted, key)
		default:
			continue
		}
		res.Insertions += o.ins
		res.Deletions += o.del
	}
	slices.Sort(res.Restored)
	slices.Sort(res.Deleted)
	slices.Sort(res.Conflicts)
	slices.SortFunc(res.Skipped, func(a, b Skip) int { return cmp.Compare(a.Path, b.Path) })
	slices.SortFunc(res.Failed, func(a, b Failure) int { return cmp.Compare(a.Path, b.Path) })
	return res
}

type action int

const (
	actNone action = iota
	actRestored
	actDeleted
)

type outcome struct {
	action   action
	conflict bool
	skip     string
	err      error
	ins, del int
}

func skipped(reason string) outcome { return outcome{skip: reason} }
func failed(err error) outcome      { return outcome{err: err} }

// restoreFile handles one path (see Restore).
func (s *Store) restoreFile(cwd, abs, key string, rec Record, opt RestoreOptions) outcome {
	if rec.Skipped != "" {
		return skipped(rec.Skipped)
	}
	// Current state.
	cur, err := os.Lstat(abs)
	if errors.Is(err, syscall.ENOTDIR) {
		return skipped(SkipParentMoved) // some ancestor is no longer a directory
	}
	absent := isNotExist(err)
	var curData []byte // nil: absent, or too large to count lines
	curState := AfterAbsent
	switch {
	case absent:
	case err != nil:
		return failed(err)
	case cur.Mode()&fs.ModeSymlink != 0:
		return skipped(SkipSymlink)
	case !cur.Mode().IsRegular():
		return skipped(SkipNotRegular)
	default:
		curData, curState, err = readRegular(abs, cur, s.max)
		if err != nil && !errors.Is(err, errTooLarge) {
			return failed(err)
		}
	}
	// Nothing to do?
	if rec.Blob == nil && absent {
		return outcome{}
	}
	same := rec.Blob != nil && !absent && curState == *rec.Blob
	if same && (rec.Mode == 0 || rec.Mode == unixMode(cur.Mode())) {
		return outcome{}
	}
	// Conflict: someone else changed the file after the agent.
	o := outcome{conflict: !same && rec.After != "" && rec.After != curState}
	if o.conflict && opt.OnConflict != OnConflictOverwrite {
		return o
	}
	// Safety checks.
	if !absent && linkCount(cur) > 1 {
		return skipped(SkipHardlink)
	}
	dir, base := filepath.Dir(abs), filepath.Base(abs)
	realParent, parentExists, err := realDir(dir)
	switch {
	case errors.Is(err, errParentMoved):
		return skipped(SkipParentMoved)
	case err != nil:
		return failed(err)
	case rec.RealParentDir != "" && realParent != rec.RealParentDir:
		return skipped(SkipParentMoved)
	case rec.RealParentDir == "" && !filepath.IsAbs(key) && !secrets.Within(realParent, realOf(cwd)):
		// A project file's directory now resolves out of the project (a
		// link planted at an ancestor) and the record has no
		// RealParentDir to compare (one could not be resolved when it
		// was taken): nothing is written or deleted outside.
		return skipped(SkipParentMoved)
	case rec.RealParentDir == "" && parentExists:
		if li, err := os.Lstat(dir); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			return skipped(SkipParentMoved)
		}
	}
	var target []byte
	if rec.Blob != nil {
		target, err = s.Get(*rec.Blob)
		if errors.Is(err, ErrBlobMissing) || errors.Is(err, ErrInvalidHash) {
			return skipped(SkipBackupMissing)
		}
		if err != nil {
			return failed(err)
		}
	}
	// Line counts (0/0 when the current file is too large to read).
	if absent || curData != nil {
		o.ins, o.del = countLines(curData, target)
	}
	if rec.Blob == nil {
		o.action = actDeleted
	} else {
		o.action = actRestored
	}
	if opt.DryRun {
		return o
	}
	// Apply, inside the verified parent directory.
	if !parentExists {
		err := mkdirIn(dir, realParent)
		if errors.Is(err, errParentMoved) {
			return skipped(SkipParentMoved)
		}
		if err != nil {
			return failed(err)
		}
		if again, ok, err := realDir(dir); err != nil || !ok || again != realParent {
			return skipped(SkipParentMoved)
		}
	}
	root, err := openDir(dir, realParent)
	if errors.Is(err, errParentMoved) {
		return skipped(SkipParentMoved)
	}
	if err != nil {
		return failed(err)
	}
	defer root.Close()
	if rec.Blob == nil {
		err = removeIn(root, base, cur)
	} else {
		mode := fileMode(rec.Mode)
		if rec.Mode == 0 {
			mode = 0o644
			if !absent {
				mode = fileMode(unixMode(cur.Mode()))
			}
		}
		err = writeIn(root, base, target, mode, cur)
	}
	if err != nil {
		return failed(err)
	}
	return o
}

// countLines counts the lines a line diff from → to removes and adds.
func countLines(from, to []byte) (ins, del int) {
	for _, e := range udiff.Lines(string(from), string(to)) {
		del += lineCount(from[e.Start:e.End])
		ins += lineCount([]byte(e.New))
	}
	return ins, del
}

// mkdirIn creates the missing directories of dir, whose real path realDir
// found to be real, inside its deepest existing ancestor opened as an
// os.Root where realDir found it (openDir): an ancestor swapped for a link
// since then makes it fail with errParentMoved, and no directory is made
// outside (os.MkdirAll would follow the link).
func mkdirIn(dir, real string) error {
	anc, realAnc := dir, real
	var missing []string
	for {
		if _, err := os.Lstat(anc); err == nil {
			break
		}
		up := filepath.Dir(anc)
		if up == anc || filepath.Base(anc) != filepath.Base(realAnc) {
			return errParentMoved
		}
		missing = append([]string{filepath.Base(anc)}, missing...)
		anc, realAnc = up, filepath.Dir(realAnc)
	}
	if len(missing) == 0 {
		return nil
	}
	root, err := openDir(anc, realAnc)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.MkdirAll(filepath.Join(missing...), 0o777)
}

// realOf is p with its symlinks resolved (cleaned when it cannot be).
func realOf(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// openDir opens dir, which must be the directory real (no symlink at the
// last component of real, and dir resolving to it).
func openDir(dir, real string) (*os.Root, error) {
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	ok := false
	if rs, err := root.Stat("."); err == nil {
		ls, lerr := os.Lstat(real)
		ds, derr := os.Stat(dir)
		ok = lerr == nil && derr == nil && os.SameFile(rs, ls) && os.SameFile(rs, ds)
	}
	if !ok {
		root.Close()
		return nil, errParentMoved
	}
	return root, nil
}

// sameAsBefore checks that name in root is still what Lstat saw (before
// == nil: still absent).
func sameAsBefore(root *os.Root, name string, before fs.FileInfo) error {
	now, err := root.Lstat(name)
	if before == nil {
		if isNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return errChangedDuringRestore
	}
	if err != nil {
		if isNotExist(err) {
			return errChangedDuringRestore
		}
		return err
	}
	if !os.SameFile(now, before) {
		return errChangedDuringRestore
	}
	return nil
}

var errChangedDuringRestore = errors.New("file changed during restore")

func removeIn(root *os.Root, name string, before fs.FileInfo) error {
	if err := sameAsBefore(root, name, before); err != nil {
		return err
	}
	if err := root.Remove(name); err != nil && !isNotExist(err) {
		return err
	}
	return nil
}

// writeIn atomically replaces name in root with data and mode.
func writeIn(root *os.Root, name string, data []byte, mode fs.FileMode, before fs.FileInfo) error {
	tmp := tempName(name)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sameAsBefore(root, name, before)
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

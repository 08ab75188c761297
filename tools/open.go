package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Errors of the file opening layer.
var (
	// ErrPathChanged is returned (wrapped) when a path changed between the
	// verdict and the execution: a directory or the file became a symlink
	// or another file. Nothing is opened then.
	ErrPathChanged = errors.New("the path changed after it was checked (a symlink or another file took its place); not following it")
	// ErrNotRegular is returned (wrapped) for devices, FIFOs, sockets and
	// (where the tool wants a file) directories.
	ErrNotRegular = errors.New("not a regular file")
	// ErrProcEnviron is returned (wrapped) for /proc/<pid>/environ: the
	// environment of ama-rpc (or of another process of the user) holds the
	// provider's credentials, and file tools run inside ama-rpc.
	ErrProcEnviron = errors.New("a process environment (it holds credentials); the file tools do not read it")
)

// procEnviron reports /proc/<pid>/environ and /proc/<pid>/task/<tid>/environ.
func procEnviron(p string) bool {
	return strings.HasPrefix(p, "/proc/") && filepath.Base(p) == "environ"
}

// openKind is what a tool wants from openReal.
type openKind int

const (
	openRead   openKind = iota // an existing regular file, read only
	openDir                    // an existing directory, read only
	openAny                    // an existing regular file or directory, read only
	openUpdate                 // an existing regular file, read and write
	openCreate                 // a regular file for writing; created (with missing directories) when absent
)

// openReal opens the real path p (symlinks already resolved by Resolve)
// so that nothing but what was judged can be opened:
//
//   - below root (the real project root) the walk starts at an os.Root of
//     the project, elsewhere at an os.Root of "/";
//   - every directory on the way is opened one component at a time and must
//     be the directory lstat saw (not a symlink, same inode);
//   - the file itself must not be a symlink and must be what lstat saw;
//     new files are created with O_EXCL;
//   - opens use O_NONBLOCK, and the type is decided with fstat on the
//     opened descriptor: devices, FIFOs and sockets are refused
//     (ErrNotRegular) without reading a byte.
//
// A directory swapped for a symlink after the verdict therefore fails with
// ErrPathChanged instead of redirecting the call. created reports a new
// file. The caller closes the file.
func openReal(root, p string, kind openKind) (f *os.File, fi fs.FileInfo, created bool, err error) {
	p = filepath.Clean(p)
	if !filepath.IsAbs(p) {
		return nil, nil, false, fmt.Errorf("open %s: not an absolute path", p)
	}
	if procEnviron(p) {
		return nil, nil, false, &fs.PathError{Op: "open", Path: p, Err: ErrProcEnviron}
	}
	base, rel := "/", strings.TrimPrefix(p, "/")
	if r, ok := relInside(root, p); ok && root != "" {
		base, rel = root, r
	}
	dir, err := os.OpenRoot(base)
	if err != nil {
		return nil, nil, false, err
	}
	defer func() { dir.Close() }()
	parts := strings.Split(rel, "/")
	if rel == "." || rel == "" {
		parts = []string{"."}
	}
	for _, c := range parts[:len(parts)-1] {
		next, err := enterDir(dir, c, kind == openCreate)
		if err != nil {
			return nil, nil, false, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		dir.Close()
		dir = next
	}
	name := parts[len(parts)-1]
	f, fi, created, err = openLeaf(dir, name, kind)
	if errors.Is(err, fs.ErrNotExist) && pseudoLinkTarget(name) {
		err = ErrNotRegular // /dev/stdin, /proc/self/fd/N naming a pipe or socket
	}
	if err != nil {
		return nil, nil, false, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return f, fi, created, nil
}

// enterDir opens the directory c of dir (creating it when mkdir is set and
// it is missing) and checks that it is the directory lstat saw.
func enterDir(dir *os.Root, c string, mkdir bool) (*os.Root, error) {
	if c == "." || c == "" {
		return dir.OpenRoot(".")
	}
	if c == ".." {
		return nil, ErrPathChanged // a real path has no ".."
	}
	li, err := dir.Lstat(c)
	if errors.Is(err, fs.ErrNotExist) && mkdir {
		if err := dir.Mkdir(c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, unwrapPathError(err)
		}
		li, err = dir.Lstat(c)
	}
	switch {
	case err != nil:
		return nil, unwrapPathError(err)
	case li.Mode()&fs.ModeSymlink != 0:
		return nil, ErrPathChanged
	case !li.IsDir():
		return nil, fmt.Errorf("%s is not a directory", c)
	}
	next, err := dir.OpenRoot(c)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	st, err := next.Stat(".")
	if err != nil || !os.SameFile(li, st) {
		next.Close()
		return nil, ErrPathChanged
	}
	return next, nil
}

// openLeaf opens the last component.
func openLeaf(dir *os.Root, name string, kind openKind) (*os.File, fs.FileInfo, bool, error) {
	flag := os.O_RDONLY
	switch kind {
	case openUpdate:
		flag = os.O_RDWR
	case openCreate:
		flag = os.O_WRONLY
	}
	li, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) && kind == openCreate:
		f, err := dir.OpenFile(name, flag|os.O_CREATE|os.O_EXCL|openExtraFlags, 0o644)
		if err != nil {
			return nil, nil, false, unwrapPathError(err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, false, err
		}
		return f, fi, true, nil
	case err != nil:
		return nil, nil, false, unwrapPathError(err)
	case li.Mode()&fs.ModeSymlink != 0:
		return nil, nil, false, ErrPathChanged
	}
	wantDir := kind == openDir || (kind == openAny && li.IsDir())
	if li.IsDir() && !wantDir {
		return nil, li, false, errIsDir
	}
	if !li.IsDir() && !li.Mode().IsRegular() {
		return nil, li, false, ErrNotRegular // not even opened
	}
	if wantDir && !li.IsDir() {
		return nil, li, false, errNotDir
	}
	f, err := dir.OpenFile(name, flag|openExtraFlags, 0)
	if err != nil {
		return nil, nil, false, unwrapPathError(err)
	}
	fi, err := f.Stat() // fstat: what was opened, not what the name was
	switch {
	case err != nil:
		f.Close()
		return nil, nil, false, err
	case !os.SameFile(li, fi):
		f.Close()
		return nil, nil, false, ErrPathChanged
	case fi.IsDir() != wantDir || (!fi.IsDir() && !fi.Mode().IsRegular()):
		f.Close()
		return nil, fi, false, ErrNotRegular
	}
	return f, fi, false, nil
}

var (
	errIsDir  = errors.New("is a directory")
	errNotDir = errors.New("not a directory")
)

// openRegular opens a file found by a directory walk (grep, ignore files)
// for reading: O_NONBLOCK, then fstat; anything but a regular file is
// refused with ErrNotRegular.
func openRegular(p string) (*os.File, fs.FileInfo, error) {
	if procEnviron(filepath.Clean(p)) {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: ErrProcEnviron}
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openExtraFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, &fs.PathError{Op: "open", Path: p, Err: ErrNotRegular}
	}
	return f, fi, nil
}

// readBounded reads at most max bytes of f; more reports false.
func readBounded(f *os.File, max int64) (data []byte, more bool, err error) {
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if int64(len(data)) > max {
		return data[:max], true, err
	}
	return data, false, err
}

// readRegularFile reads a whole regular file of at most max bytes (ignore
// files, grep targets); larger files report more.
func readRegularFile(p string, max int64) ([]byte, bool, error) {
	f, _, err := openRegular(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return readBounded(f, max)
}

// readDirCtx lists an open directory sorted by name, in chunks, ending
// with ctx's error when ctx ends (huge directories).
func readDirCtx(ctx context.Context, f *os.File) ([]fs.DirEntry, error) {
	var all []fs.DirEntry
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk, err := f.ReadDir(4096)
		all = append(all, chunk...)
		if errors.Is(err, io.EOF) || (err == nil && len(chunk) == 0) {
			break
		}
		if err != nil {
			sortEntries(all)
			return all, err
		}
	}
	sortEntries(all)
	return all, nil
}

func sortEntries(entries []fs.DirEntry) {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}

// describeOpenError turns an error of openReal into the text a tool shows
// after "Cannot <verb> <shown>: ".
func describeOpenError(err error) string {
	err = unwrapPathError(err)
	switch {
	case errors.Is(err, ErrNotRegular):
		return "not a regular file (devices, FIFOs and sockets are not read or written by the file tools)"
	case errors.Is(err, ErrPathChanged):
		return ErrPathChanged.Error()
	case errors.Is(err, ErrProcEnviron):
		return ErrProcEnviron.Error()
	}
	return err.Error()
}

// pseudoLinkTarget reports the names /proc/<pid>/fd links carry for
// descriptors that are not files ("pipe:[123]", "socket:[4]",
// "anon_inode:[eventfd]").
func pseudoLinkTarget(name string) bool {
	for _, pre := range [...]string{"pipe:[", "socket:[", "anon_inode:"} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

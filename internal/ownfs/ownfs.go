package ownfs

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/armadra/ama-rpc/internal/secrets"
)

// MaxConfig bounds the files ama-rpc reads for itself (config, hooks,
// context files, definitions): larger files are refused, not cut.
const MaxConfig = 8 << 20

// Errors wrapped by the refusals of this package.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
	ErrSecret     = errors.New("reaches a credential file")
	ErrHardLink   = errors.New("has more than one hard link (may be a copy of another file)")
	ErrChanged    = errors.New("changed while it was opened")
	ErrNotOwned   = errors.New("directory belongs to another user")
)

// ReadUser reads a file of the user's own (config, hooks, auth, profile,
// trust file, files named in user config). Links are followed: they are
// the user's. Only a regular file of at most limit bytes is read.
func ReadUser(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f, path, limit, false)
}

// ReadUserIn reads a user file kept in dir whose content goes to the
// model (a prompt template in the config directory, which is itself a
// credential store): links are followed (dotfile managers), but a file
// reached outside dir may not be a credential path (internal/secrets;
// auth.json next to dir included), and must be a regular file of at most
// limit bytes.
func ReadUserIn(dir, path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(realDir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if err := reached(f, path); err != nil {
			return nil, err
		}
	}
	return readRegular(f, path, limit, false)
}

// ReadIn reads name (absolute inside root, or relative to it) for a
// purpose of ama-rpc's own, where the tree is not the user's (the
// project): links inside root are followed, a link out of it is refused,
// the file reached may not be a credential path (internal/secrets) nor
// have a second hard link, and must be a regular file of at most limit
// bytes.
func ReadIn(root, name string, limit int64) ([]byte, error) {
	rel, err := relIn(root, name)
	if err != nil {
		return nil, err
	}
	full := filepath.Join(root, rel)
	if r := secrets.Reason(full); r != "" {
		return nil, &fs.PathError{Op: "read", Path: full, Err: fmt.Errorf("%w: %s", ErrSecret, r)}
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	f, err := rt.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: full, Err: err}
	}
	defer f.Close()
	// Where it led: the root keeps it inside, the credential list judges
	// what is inside (a project that is the home directory holds .ssh).
	if err := reached(f, full); err != nil {
		return nil, err
	}
	return readRegular(f, full, limit, true)
}

// reached checks what opening path led to: not a credential path, and the
// same file as the one open (nothing was swapped in between).
func reached(f *os.File, path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	if r := secrets.Reason(real); r != "" {
		return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %s (via %s)", ErrSecret, r, real)}
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if ri, err := os.Stat(real); err != nil || !os.SameFile(fi, ri) {
		return &fs.PathError{Op: "read", Path: path, Err: ErrChanged}
	}
	return nil
}

// relIn returns name relative to root; an absolute name must lie inside
// root lexically.
func relIn(root, name string) (string, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(root, name)
	}
	rel, err := filepath.Rel(root, name)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("not inside %s", root)}
	}
	return rel, nil
}

// readRegular reads f after checking it is a regular file (and, when
// single, has one link) of at most limit bytes.
func readRegular(f *os.File, name string, limit int64, single bool) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())}
	}
	if single && links(fi) > 1 {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrHardLink}
	}
	if limit <= 0 {
		limit = MaxConfig
	}
	if fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	return b, nil
}

// OpenDir creates dir (mode 0700, parents included) and opens it as an
// os.Root. dir's parent is trusted (it is ama's own directory, or the
// system temp directory); dir itself may be a link only to somewhere
// inside that parent.
func OpenDir(dir string) (*os.Root, error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	parent, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	r, err := parent.OpenRoot(filepath.Base(dir))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	if err := owned(r, dir); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// owned refuses a directory (open as r) that another user owns: in a
// shared directory such as /tmp another local user could have made
// ama-outputs first and would then read, replace or remove what ama-rpc
// puts there. The user's own and root's directories pass.
func owned(r *os.Root, dir string) error {
	fi, err := r.Stat(".")
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	if o, ok := owner(fi); ok && o != uint32(os.Getuid()) && o != 0 {
		return &fs.PathError{Op: "open", Path: dir, Err: ErrNotOwned}
	}
	return nil
}

// CreateTemp creates a new file in dir (see OpenDir) named pattern with
// its last "*" replaced by a random string, opened for reading and
// writing with O_EXCL (mode 0600), and returns it with its full path.
func CreateTemp(dir, pattern string) (*os.File, string, error) {
	r, err := OpenDir(dir)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	f, name, err := createTemp(r, pattern)
	if err != nil {
		return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(dir, pattern), Err: err}
	}
	return f, filepath.Join(dir, name), nil
}

func createTemp(r *os.Root, pattern string) (*os.File, string, error) {
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for range 100 {
		var b [4]byte
		_, _ = rand.Read(b[:])
		// Decimal, as os.CreateTemp names them.
		name := prefix + strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[:])), 10) + suffix
		f, err := r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("no free name for %s", pattern)
}

// CreateNew creates dir/name (see OpenDir) with O_EXCL, opened for
// reading and writing: an existing file or a planted link makes it fail.
func CreateNew(dir, name string, perm fs.FileMode) (*os.File, error) {
	r, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|oNoFollow, perm)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: filepath.Join(dir, name), Err: err}
	}
	return f, nil
}

// WriteAtomic replaces dir/name (name is one path element) with data, as
// WriteAtomicIn(parent of dir, base of dir/name): dir may be a link only to
// somewhere inside its parent.
func WriteAtomic(dir, name string, data []byte) error {
	if name != filepath.Base(name) || name == "." || name == ".." {
		return &fs.PathError{Op: "write", Path: filepath.Join(dir, name), Err: fs.ErrInvalid}
	}
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	return WriteAtomicIn(filepath.Dir(dir), filepath.Join(filepath.Base(dir), name), data)
}

// WriteAtomicIn replaces root/rel with data (mode 0600). The directories
// of rel are created inside root (0700) and may not lead out of it; data
// goes to a new temporary file next to rel (O_EXCL), which is then renamed
// over rel: a link planted at rel is replaced, never followed, and readers
// see the old or the new content, nothing between.
func WriteAtomicIn(root, rel string, data []byte) error {
	full := filepath.Join(root, rel)
	rel, err := relIn(root, rel)
	if err != nil || rel == "." {
		return &fs.PathError{Op: "write", Path: full, Err: fs.ErrInvalid}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	dir, name := filepath.Split(rel)
	dir = filepath.Clean(dir)
	if dir != "." {
		// The file's own directory, held open: checked once (owner) and
		// used for both the temporary file and the rename.
		if err := r.MkdirAll(dir, 0o700); err != nil {
			return &fs.PathError{Op: "write", Path: full, Err: err}
		}
		d, err := r.OpenRoot(dir)
		if err != nil {
			return &fs.PathError{Op: "write", Path: full, Err: err}
		}
		defer d.Close()
		if err := owned(d, filepath.Join(root, dir)); err != nil {
			return err
		}
		r, rel = d, name
	}
	f, tmp, err := createTemp(r, "."+name+".tmp-*")
	if err != nil {
		return &fs.PathError{Op: "write", Path: full, Err: err}
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = r.Rename(tmp, rel)
	}
	if werr != nil {
		_ = r.Remove(tmp)
		return &fs.PathError{Op: "write", Path: full, Err: werr}
	}
	return nil
}

// ReadTail reads the last n bytes of a file ama-rpc holds open (a job
// log: read through the descriptor it created, never reopened by path)
// and returns them with the file's size.
func ReadTail(f *os.File, n int64) ([]byte, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := fi.Size()
	from := max(size-n, 0)
	b := make([]byte, size-from)
	k, err := f.ReadAt(b, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, size, err
	}
	return b[:k], size, nil
}

// OpenAppend opens path (absolute) for appending, creating it (mode 0600)
// and its directory (0700) when missing: the permission decision log. The
// last component is opened without following a link (one planted there is
// refused, never written through), and only a regular file is kept.
func OpenAppend(path string) (*os.File, error) {
	if !filepath.IsAbs(path) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	r, err := OpenDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(filepath.Base(path), os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return f, nil
}

package childenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrGitFile is the refusal of ama-rpc's own git when a file git opens on
// every call is not a regular file: a FIFO at .git/HEAD or .git/index
// (both writable by a sandboxed command) would block that git, and the
// call that waits for it, until its timeout. git has no option to open its
// own files without blocking, so they are checked here first: each is
// opened with O_NONBLOCK (a FIFO opens at once) and must be a regular file
// (or missing: git says what it thinks of that itself).
var ErrGitFile = errors.New("not a regular file")

// gitFilesMax bounds what is read of .git (a gitdir file), HEAD and
// commondir.
const gitFilesMax = 4096

// checkGitFiles checks the files git reads on every call in the
// repository of dir: the git directory found from dir upward (.git
// directory, or a .git file's gitdir), its HEAD and index, the common
// directory's packed-refs and the branch file HEAD names.
func checkGitFiles(dir string) error {
	gd, err := findGitDir(dir)
	if err != nil || gd == "" {
		return err
	}
	head, err := readRegular(filepath.Join(gd, "HEAD"))
	if err != nil {
		return err
	}
	if _, err := readRegular(filepath.Join(gd, "index")); err != nil {
		return err
	}
	common := gd
	if b, err := readRegular(filepath.Join(gd, "commondir")); err != nil {
		return err
	} else if c := strings.TrimSpace(string(b)); c != "" {
		if !filepath.IsAbs(c) {
			c = filepath.Join(gd, c)
		}
		common = c
	}
	if _, err := readRegular(filepath.Join(common, "packed-refs")); err != nil {
		return err
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok && strings.HasPrefix(ref, "refs/") && !strings.Contains(ref, "..") {
		if _, err := readRegular(filepath.Join(common, filepath.FromSlash(ref))); err != nil {
			return err
		}
	}
	return nil
}

// findGitDir is the git directory of the repository holding dir ("" when
// none is found): the nearest .git upward, a directory or a file naming
// one (a linked worktree).
func findGitDir(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", nil
	}
	for {
		p := filepath.Join(d, ".git")
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return p, nil
		case err == nil:
			b, err := readRegular(p)
			if err != nil {
				return "", err
			}
			gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
			if !ok {
				return "", nil // git says what is wrong with it
			}
			if !filepath.IsAbs(gd) {
				gd = filepath.Join(d, gd)
			}
			return gd, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", nil
		}
		d = parent
	}
}

// readRegular reads up to gitFilesMax bytes of p without ever blocking in
// open: nil, nil when p is missing; ErrGitFile when it is anything but a
// regular file (links followed, as git follows them).
func readRegular(p string) ([]byte, error) {
	// Stat first: a link to a device is not even opened (opening some
	// devices acts); the descriptor is checked again below.
	if fi, err := os.Stat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("ama-rpc's git: %s is %s, %w (git would block on it)", p, fi.Mode().Type(), ErrGitFile)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ama-rpc's git: %s: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ama-rpc's git: %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("ama-rpc's git: %s is %s, %w (git would block on it)", p, fi.Mode().Type(), ErrGitFile)
	}
	return io.ReadAll(io.LimitReader(f, gitFilesMax))
}

package tools

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// maxWalkEntries bounds how many directory entries one grep or glob looks
// at.
const maxWalkEntries = 200000

// maxIgnoreFileBytes is how much of one .gitignore or .ignore is read.
const maxIgnoreFileBytes = 1 << 20

// errWalkLimit stops a walk that saw maxWalkEntries entries.
var errWalkLimit = errors.New("walk limit reached")

// errStopWalk is returned by a visit function to end the walk early.
var errStopWalk = errors.New("stop walk")

// ignoreLayer is the combined .gitignore and .ignore of one directory; its
// patterns apply to paths below dir.
type ignoreLayer struct {
	dir string
	gi  *ignore.GitIgnore
}

func (l ignoreLayer) ignores(abs string, isDir bool) bool {
	rel, ok := relInside(l.dir, abs)
	if !ok || rel == "." {
		return false
	}
	if isDir {
		rel += "/"
	}
	return l.gi.MatchesPath(rel)
}

// loadIgnores reads dir/.gitignore then dir/.ignore (so that .ignore can
// re-include with "!"); ok is false when neither exists.
func loadIgnores(dir string) (ignoreLayer, bool) {
	var lines []string
	for _, name := range []string{".gitignore", ".ignore"} {
		b, _, err := readRegularFile(filepath.Join(dir, name), maxIgnoreFileBytes)
		if err != nil {
			continue
		}
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	if len(lines) == 0 {
		return ignoreLayer{}, false
	}
	return ignoreLayer{dir: dir, gi: ignore.CompileIgnoreLines(lines...)}, true
}

func ignored(layers []ignoreLayer, abs string, isDir bool) bool {
	for _, l := range layers {
		if l.ignores(abs, isDir) {
			return true
		}
	}
	return false
}

// walkFiles visits the files below root (a real path) in lexical order, depth first,
// calling visit with each file's absolute path and entry. It skips .git,
// files and directories matched by the .gitignore/.ignore files of root,
// of its subdirectories and of root's ancestors up to the session cwd, and
// symlinks to directories (symlinked files are visited). A root that the
// ancestors' rules would ignore is walked anyway (it was asked for), with
// only the ignore files inside it applied. skipDir, when not nil, prunes
// further directories. visit may return errStopWalk.
// The walk ends with errWalkLimit after maxWalkEntries entries and with
// ctx's error when ctx ends.
func walkFiles(ctx context.Context, env *Env, root string, skipDir func(abs string) bool, visit func(abs string, d fs.DirEntry) error) error {
	layers := ancestorIgnores(realOr(env.cwd()), root)
	if ignored(layers, root, true) {
		layers = nil
	}
	seen := 0
	var walkDir func(dir string, layers []ignoreLayer) error
	walkDir = func(dir string, layers []ignoreLayer) error {
		if l, ok := loadIgnores(dir); ok {
			layers = append(layers[:len(layers):len(layers)], l)
		}
		entries, err := readDir(ctx, dir) // never blocks on a FIFO put in a directory's place
		if err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return nil // unreadable directories are skipped
		}
		for _, d := range entries {
			seen++
			if seen > maxWalkEntries {
				return errWalkLimit
			}
			if seen%256 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if d.Name() == ".git" {
				continue
			}
			abs := filepath.Join(dir, d.Name())
			isDir := d.IsDir()
			if d.Type()&fs.ModeSymlink != 0 {
				fi, err := os.Stat(abs)
				if err != nil || fi.IsDir() {
					continue // broken link or link to a directory
				}
			}
			if ignored(layers, abs, isDir) {
				continue
			}
			if isDir {
				if skipDir != nil && skipDir(abs) {
					continue
				}
				if err := walkDir(abs, layers); err != nil {
					return err
				}
				continue
			}
			if err := visit(abs, d); err != nil {
				return err
			}
		}
		return nil
	}
	return walkDir(root, layers)
}

// ancestorIgnores loads the ignore files of the directories from cwd down
// to root's parent, when root is below cwd.
func ancestorIgnores(cwd, root string) []ignoreLayer {
	rel, ok := relInside(cwd, root)
	if !ok || rel == "." {
		return nil
	}
	var layers []ignoreLayer
	dir := cwd
	parts := strings.Split(rel, "/")
	for i := 0; i < len(parts); i++ {
		if l, ok := loadIgnores(dir); ok {
			layers = append(layers, l)
		}
		dir = filepath.Join(dir, parts[i])
	}
	return layers
}

package checkpoint_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/checkpoint"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a project directory plus a blob store.
type env struct {
	t     *testing.T
	cwd   string
	data  string
	store *checkpoint.Store
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, cwd: filepath.Join(root, "proj"), data: filepath.Join(root, "data")}
	if err := os.Mkdir(e.cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	e.store = checkpoint.NewStore(e.data, 0)
	return e
}

func (e *env) path(rel string) string { return filepath.Join(e.cwd, filepath.FromSlash(rel)) }

func (e *env) write(rel, content string, mode fs.FileMode) {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *env) remove(rel string) {
	e.t.Helper()
	if err := os.RemoveAll(e.path(rel)); err != nil {
		e.t.Fatal(err)
	}
}

// change runs fn as a tool of turn would: BeforeChange on every path
// first, After on every path afterwards.
func (e *env) change(turn *checkpoint.Turn, fn func(), rels ...string) {
	e.t.Helper()
	for _, r := range rels {
		if _, _, err := turn.BeforeChange(e.path(r)); err != nil {
			e.t.Fatal(err)
		}
	}
	fn()
	for _, r := range rels {
		turn.After(e.path(r))
	}
}

// tree describes every entry under dir (type, mode, content or target).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %v", fi.Mode().Perm())
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("file %v %q", fi.Mode(), b)
		default:
			out[rel] = fmt.Sprintf("other %v", fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func ptr[T any](v T) *T { return &v }

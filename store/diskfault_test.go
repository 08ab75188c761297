package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/armadra/ama-rpc/store"
)

// A create that fails names the session file, not its temporary file
// (issue 36), and wraps ErrWrite. The name is a valid one whose temporary
// sibling is too long for the file system (ENAMETOOLONG, even for root).
func TestCreateErrorNamesSessionFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), strings.Repeat("s", 240)+".jsonl")
	_, err := store.Create(path, testHeader("s"), chain(1))
	if err == nil {
		t.Skip("the file system takes names over 255 bytes")
	}
	if !errors.Is(err, store.ErrWrite) {
		t.Errorf("error %v does not wrap ErrWrite", err)
	}
	if strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), path+":") {
		t.Errorf("error %q names the temporary file or not the session file", err)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*")); len(m) != 0 {
		t.Errorf("left behind: %v", m)
	}
}

// File notices a file changed under it before writing, and Rewrite puts
// back everything it is given.
func TestAppendNoticesChangedFile(t *testing.T) {
	for _, mode := range []string{"deleted", "replaced", "truncated", "appended to"} {
		t.Run(strings.ReplaceAll(mode, " ", "_"), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			es := chain(4)
			f, err := store.Create(path, testHeader("s"), es[:2])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			switch mode {
			case "deleted":
				os.Remove(path)
			case "replaced":
				os.Rename(writeTempFile(t, path+".x", "other\n"), path)
			case "truncated":
				os.Truncate(path, 10)
			case "appended to":
				fd, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				fd.WriteString("\n")
				fd.Close()
			}
			err = f.Append(es[2])
			var ce *store.ChangedError
			if !errors.Is(err, store.ErrFileChanged) || !errors.As(err, &ce) || ce.What != mode {
				t.Fatalf("append after the file was %s: %v", mode, err)
			}
			if err := f.Rewrite(testHeader("s"), es[:3], &es[1].ID); err != nil {
				t.Fatal(err)
			}
			if err := f.Append(es[3]); err != nil {
				t.Fatalf("append after the rewrite: %v", err)
			}
			snap, err := store.ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(snap.Entries); strings.Join(got, ",") != strings.Join(ids(es), ",") {
				t.Errorf("entries %v, want %v", got, ids(es))
			}
			if _, err := os.Stat(path + ".lock"); err != nil {
				t.Errorf("lock file: %v", err)
			}
		})
	}
}

func writeTempFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

//go:build unix

package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The race Restore's directory creation closes: realDir judged the missing
// parent (inside the project), then an ancestor is swapped for a link out
// of the project before the directories are made. mkdirIn makes nothing
// outside and reports the move; the everyday case makes the directories.
func TestMkdirInAfterSwap(t *testing.T) {
	root := t.TempDir()
	proj, out := filepath.Join(root, "proj"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(proj, "a"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(proj, "a", "b", "c")
	real, exists, err := realDir(dir)
	if err != nil || exists {
		t.Fatalf("realDir: %q %v %v", real, exists, err)
	}
	// The swap, between the check and the use.
	if err := os.Rename(filepath.Join(proj, "a"), filepath.Join(proj, "a.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(proj, "a")); err != nil {
		t.Fatal(err)
	}
	if err := mkdirIn(dir, real); !errors.Is(err, errParentMoved) {
		t.Errorf("mkdirIn after the swap: %v, want errParentMoved", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("directories made outside the project: %v", ents)
	}
	// Everyday: nothing swapped, the directories are made.
	dir = filepath.Join(proj, "a.old", "b", "c")
	if real, _, err = realDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := mkdirIn(dir, real); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("everyday: %v", err)
	}
}

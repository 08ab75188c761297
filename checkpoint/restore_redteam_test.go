//go:build unix

package checkpoint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/armadra/ama-rpc/checkpoint"
)

// A record with no RealParentDir (it could not be resolved when the
// snapshot was taken) for a project file whose ancestor directory a
// command has since replaced by a link out of the project: rewind writes
// nothing there (not the file, not its missing directories) and deletes
// nothing there; the directory outside is unchanged.
func TestRestoreNeverLeavesTheProject(t *testing.T) {
	for _, tc := range []struct {
		name    string
		blob    bool   // the record restores content (else: deletes)
		outside string // a file already outside, at b/f.txt ("": none)
	}{
		{name: "write through a linked ancestor", blob: true},
		{name: "delete through a linked ancestor", outside: "the user's file\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			out := filepath.Join(filepath.Dir(e.cwd), "outside")
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.outside != "" {
				if err := os.MkdirAll(filepath.Join(out, "b"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, "b", "f.txt"), []byte(tc.outside), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, out)
			var rec checkpoint.Record
			if tc.blob {
				h, err := e.store.Put([]byte("from the checkpoint\n"))
				if err != nil {
					t.Fatal(err)
				}
				rec.Blob = &h
			}
			e.symlink(out, "a") // a -> outside: a/b/f.txt now names outside/b/f.txt
			res := e.store.Restore(e.cwd, map[string]checkpoint.Record{"a/b/f.txt": rec}, checkpoint.RestoreOptions{OnConflict: checkpoint.OnConflictOverwrite})
			if after := tree(t, out); len(after) != len(before) || after["b/f.txt"] != before["b/f.txt"] || after["b"] != before["b"] {
				t.Fatalf("rewind changed the directory outside the project:\nbefore %v\nafter  %v\nresult %+v", before, after, res)
			}
			if len(res.Skipped) != 1 || res.Skipped[0].Reason != checkpoint.SkipParentMoved {
				t.Errorf("result %+v, want a parent_moved skip", res)
			}
		})
	}
}
